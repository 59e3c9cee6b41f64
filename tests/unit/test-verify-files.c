/*
 * The files fix --verify compares (analyzer/report/verify_files.c): .npy
 * arrays element by element within the tolerance, text as the standard
 * outputs are, other files byte for byte; a hostile .npy header never read
 * past the file; the files a run wrote found through real directories only.
 */
#include "verify_internal.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char dir[64];

static void setup(void)
{
	strcpy(dir, "/tmp/agprof-verify-files-XXXXXX");
	cr_assert(mkdtemp(dir));
}

static void teardown(void)
{
	scratch_remove(dir);
}

static const char *path(const char *name)
{
	static char buf[2][256];
	static int turn;

	turn ^= 1;
	snprintf(buf[turn], sizeof(buf[turn]), "%s/%s", dir, name);
	return buf[turn];
}

static void write_file(const char *name, const void *data, size_t len)
{
	FILE *f = fopen(path(name), "wb");

	cr_assert(f);
	cr_assert_eq(fwrite(data, 1, len, f), len);
	fclose(f);
}

/* A version 1 .npy of n values of descr (4 or 8 bytes each), as NumPy lays it out. */
static void write_npy(const char *name, const char *descr, const char *shape, const void *values, size_t bytes)
{
	char head[128];
	unsigned char file[512];
	int n = snprintf(head, sizeof(head), "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
	size_t hl = (size_t)n;

	while ((10 + hl + 1) % 64)
		head[hl++] = ' ';
	head[hl++] = '\n';
	memcpy(file, "\x93NUMPY\x01\x00", 8);
	file[8] = (unsigned char)(hl & 0xff);
	file[9] = (unsigned char)(hl >> 8);
	memcpy(file + 10, head, hl);
	memcpy(file + 10 + hl, values, bytes);
	write_file(name, file, 10 + hl + bytes);
}

static int compare(const char *a, const char *b, double rtol, struct strbuf *what, int *tol)
{
	char pa[256];

	snprintf(pa, sizeof(pa), "%s", path(a));
	return file_difference(pa, path(b), rtol, 0, what, tol);
}

Test(verify_files, npy_arrays_by_element, .init = setup, .fini = teardown)
{
	const float a[4] = { 1.0f, 2.0f, 3.0f, 4.0f }, near[4] = { 1.0f, 2.0f, 3.0000002f, 4.0f },
		    far[4] = { 1.0f, 2.0f, 3.5f, 4.0f };
	const int64_t i[2] = { 7, -3 }, j[2] = { 7, -4 };
	struct strbuf what = STRBUF_INIT;
	int tol;

	write_npy("a.npy", "<f4", "(2, 2)", a, sizeof(a));
	write_npy("near.npy", "<f4", "(2, 2)", near, sizeof(near));
	write_npy("far.npy", "<f4", "(2, 2)", far, sizeof(far));
	cr_assert_eq(compare("a.npy", "near.npy", 0, &what, &tol), 1, "no tolerance: another number");
	strbuf_release(&what);
	cr_assert_eq(compare("a.npy", "near.npy", 1e-6, &what, &tol), 0);
	cr_assert_eq(tol, 1, "equal only within the tolerance");
	cr_assert_eq(compare("a.npy", "far.npy", 1e-6, &what, &tol), 1);
	cr_assert(what.buf && strstr(what.buf, "element 2 of 4: 3 -> 3.5"), "%s", what.buf);
	strbuf_release(&what);
	write_npy("i.npy", "<i8", "(2,)", i, sizeof(i));
	write_npy("j.npy", "<i8", "(2,)", j, sizeof(j));
	cr_assert_eq(compare("i.npy", "j.npy", 0, &what, &tol), 1);
	cr_assert(what.buf && strstr(what.buf, "element 1 of 2: -3 -> -4"), "%s", what.buf);
	strbuf_release(&what);
	cr_assert_eq(compare("i.npy", "a.npy", 0, &what, &tol), 1, "another type");
	strbuf_release(&what);
}

Test(verify_files, text_and_bytes, .init = setup, .fini = teardown)
{
	struct strbuf what = STRBUF_INIT;
	int tol;

	write_file("a.txt", "loss 0.5\nacc 0.9\n", 17);
	write_file("b.txt", "loss 0.5000001\nacc 0.9\n", 23);
	cr_assert_eq(compare("a.txt", "b.txt", 1e-5, &what, &tol), 0);
	cr_assert_eq(tol, 1);
	cr_assert_eq(compare("a.txt", "b.txt", 0, &what, &tol), 1);
	cr_assert(what.buf && strstr(what.buf, "(line 1)"), "%s", what.buf);
	strbuf_release(&what);
	write_file("a.bin", "ab\0cd", 5);
	write_file("b.bin", "ab\0ce", 5);
	write_file("c.bin", "ab\0cd", 5);
	cr_assert_eq(compare("a.bin", "b.bin", 1, &what, &tol), 1, "bytes: no tolerance");
	strbuf_release(&what);
	cr_assert_eq(compare("a.bin", "c.bin", 0, &what, &tol), 0);
	cr_assert_eq(compare("a.bin", "none.bin", 0, &what, &tol), -1, "unreadable");
}

/* A header that claims more than the file, or a shape whose size overflows: bytes, never a read past the end. */
Test(verify_files, hostile_npy_headers, .init = setup, .fini = teardown)
{
	unsigned char big[18] = "\x93NUMPY\x01\x00\xff\xff{'descr'";
	const double v[1] = { 1.0 };
	struct strbuf what = STRBUF_INIT;
	int tol;

	write_file("a.npy", big, sizeof(big));
	write_file("b.npy", big, sizeof(big));
	cr_assert_eq(compare("a.npy", "b.npy", 0, &what, &tol), 0);
	write_npy("c.npy", "<f8", "(4294967296, 4294967296, 4294967296)", v, sizeof(v));
	write_npy("d.npy", "<f8", "(4294967296, 4294967296, 4294967296)", v, sizeof(v));
	cr_assert_eq(compare("c.npy", "d.npy", 0, &what, &tol), 0);
	write_npy("e.npy", "<f8", "(3,)", v, sizeof(v));  /* fewer values than its shape */
	write_npy("f.npy", "<f8", "(3,)", v, sizeof(v));
	cr_assert_eq(compare("e.npy", "f.npy", 0, &what, &tol), 0);
	strbuf_release(&what);
}

Test(verify_files, written_through_real_directories_only, .init = setup, .fini = teardown)
{
	struct written_files w;
	struct timespec since;
	char other[64];

	write_file("old.txt", "before", 6);
	cr_assert_eq(mkdir(path("out"), 0700), 0);
	cr_assert_eq(mkdir(path("__pycache__"), 0700), 0);
	strcpy(other, "/tmp/agprof-verify-other-XXXXXX");
	cr_assert(mkdtemp(other));
	cr_assert_eq(symlink(other, path("linked")), 0);
	/* written just before: older, though file times are finer than the coarse clock (multigrain) */
	write_file("just_before.txt", "w", 1);
	clock_gettime(CLOCK_REALTIME, &since);
	usleep(20000);
	write_file("out/w.npy", "x", 1);
	write_file("new.txt", "y", 1);
	write_file("__pycache__/m.pyc", "z", 1);
	write_file("linked/elsewhere.txt", "z", 1);
	cr_assert_eq(written_files(dir, &since, &w), 0);
	cr_assert_eq(w.n, 2);
	cr_assert_str_eq(w.rel[0], "new.txt");
	cr_assert_str_eq(w.rel[1], "out/w.npy");
	cr_assert_eq(written_find(&w, "out/w.npy"), 1);
	cr_assert_eq(written_find(&w, "old.txt"), -1);
	written_files_release(&w);
	scratch_remove(other);
}
