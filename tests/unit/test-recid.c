/* test-recid.c - a recording's id (common/recid.h): new, valid, from content. */
#include "recid.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

Test(recid, new_ids_are_valid_version_4_and_differ)
{
	char a[RECID_LEN], b[RECID_LEN];

	cr_assert_eq(recid_new(a), 0);
	cr_assert_eq(recid_new(b), 0);
	cr_assert(recid_valid(a) && recid_valid(b));
	cr_assert_eq(a[14], '4', "version nibble of %s", a);
	cr_assert(strchr("89ab", a[19]), "variant of %s", a);
	cr_assert_str_neq(a, b);
}

Test(recid, untrusted_text_is_checked)
{
	static const char *const bad[] = { NULL, "", "1472ad1e-16e1-43d5-b3c8-40372c9d4a2", /* 35 */
					   "1472ad1e-16e1-43d5-b3c8-40372c9d4a2c0",              /* 37 */
					   "1472AD1E-16e1-43d5-b3c8-40372c9d4a2c",               /* upper case */
					   "1472ad1e_16e1-43d5-b3c8-40372c9d4a2c",
					   "1472ad1e-16e1-43d5-b3c8-40372c9d4a2g",
					   "../../etc-16e1-43d5-b3c8-40372c9d4a2c",
					   "1472ad1e-16e1-43d5-b3c8-40372c9/4a2c" };

	cr_assert(recid_valid("1472ad1e-16e1-43d5-b3c8-40372c9d4a2c"));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert(!recid_valid(bad[i]), "'%s' taken for an id", bad[i] ? bad[i] : "(null)");
}

Test(recid, content_ids_are_the_digest_as_version_8)
{
	unsigned char d[RECID_DIGEST];
	char id[RECID_LEN], hex[2 * RECID_DIGEST + 1];

	for (int i = 0; i < RECID_DIGEST; i++)
		d[i] = (unsigned char)(i * 17);
	recid_from_digest(d, id);
	cr_assert_str_eq(id, "00112233-4455-8677-8899-aabbccddeeff");
	cr_assert(recid_valid(id));
	recid_hex(d, hex);
	cr_assert_eq(strncmp(hex, "0011223344556677", 16), 0);
}

Test(recid, file_digest_is_sha256_of_file_and_wal)
{
	char path[] = "/tmp/agprof-recid-XXXXXX", wal[64], hex[2 * RECID_DIGEST + 1];
	unsigned char d[RECID_DIGEST];
	int fd = mkstemp(path);
	FILE *f;

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "abc", 3), 3);
	close(fd);
	cr_assert_eq(recid_file_digest(path, d), 0);
	recid_hex(d, hex);
	cr_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"); /* SHA-256("abc") */
	snprintf(wal, sizeof(wal), "%s-wal", path);
	cr_assert_not_null(f = fopen(wal, "w"));
	fputs("def", f);
	fclose(f);
	cr_assert_eq(recid_file_digest(path, d), 0);
	recid_hex(d, hex);
	/* SHA-256("abcdef"): the WAL's rows are part of the recording */
	cr_assert_str_eq(hex, "bef57ec7f53a6d40beb640a780a639c83bc29ac8a9816f1fc6c5c6dcd93c4721");
	unlink(wal);
	unlink(path);
	cr_assert_eq(recid_file_digest(path, d), -1);
}
