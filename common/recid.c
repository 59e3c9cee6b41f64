/* recid.c - see recid.h. */
#include "recid.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char hexdig[] = "0123456789abcdef";

/* 16 bytes as 8-4-4-4-12 hex. */
static void format_uuid(const unsigned char b[16], char out[RECID_LEN])
{
	char *p = out;

	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*p++ = '-';
		*p++ = hexdig[b[i] >> 4];
		*p++ = hexdig[b[i] & 15];
	}
	*p = '\0';
}

int recid_new(char out[RECID_LEN])
{
	unsigned char b[16];

	if (RAND_bytes(b, sizeof(b)) != 1) {
		out[0] = '\0';
		return -1;
	}
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 9562 variant */
	format_uuid(b, out);
	return 0;
}

int recid_valid(const char *s)
{
	if (!s || strlen(s) != RECID_LEN - 1)
		return 0;
	for (int i = 0; i < RECID_LEN - 1; i++) {
		int dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != '-' : !s[i] || !strchr(hexdig, s[i]))
			return 0;
	}
	return 1;
}

void recid_from_digest(const unsigned char d[RECID_DIGEST], char out[RECID_LEN])
{
	unsigned char b[16];

	memcpy(b, d, sizeof(b));
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x80); /* version 8: custom (a SHA-256 of the content) */
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	format_uuid(b, out);
}

/* Feed path's bytes to ctx: 0, 1 when it does not exist and may not (missing_ok), -1 on error (errno). */
static int digest_file(EVP_MD_CTX *ctx, const char *path, int missing_ok)
{
	unsigned char buf[1 << 16];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return missing_ok && errno == ENOENT ? 1 : -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (EVP_DigestUpdate(ctx, buf, (size_t)n) != 1) {
			n = -1;
			errno = ENOMEM;
			break;
		}
	if (n < 0) {
		int saved = errno;

		close(fd);
		errno = saved;
		return -1;
	}
	close(fd);
	return 0;
}

int recid_file_digest(const char *path, unsigned char d[RECID_DIGEST])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	char wal[4200];
	unsigned int len = 0;
	int rc = -1;

	snprintf(wal, sizeof(wal), "%s-wal", path);
	if (ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 && digest_file(ctx, path, 0) == 0 &&
	    digest_file(ctx, wal, 1) >= 0 && EVP_DigestFinal_ex(ctx, d, &len) == 1 && len == RECID_DIGEST)
		rc = 0;
	else if (!ctx)
		errno = ENOMEM;
	EVP_MD_CTX_free(ctx);
	return rc;
}

void recid_hex(const unsigned char d[RECID_DIGEST], char out[2 * RECID_DIGEST + 1])
{
	for (int i = 0; i < RECID_DIGEST; i++) {
		out[2 * i] = hexdig[d[i] >> 4];
		out[2 * i + 1] = hexdig[d[i] & 15];
	}
	out[2 * RECID_DIGEST] = '\0';
}
