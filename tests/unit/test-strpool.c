/* test-strpool.c - the string pool (common/strpool.h) and grow_array (common/checked.h). */
#include "strpool.h"
#include "checked.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

Test(strpool, interns_equal_bytes_once)
{
	struct strpool p = STRPOOL_INIT;
	char a[] = "train_step", b[] = "train_step";
	const char *x = strpool_str(&p, a), *y = strpool_str(&p, b), *z = strpool_intern(&p, "train_stepX", 10);

	cr_assert_str_eq(x, "train_step");
	cr_assert_eq(x, y, "the same text must give the same pointer");
	cr_assert_eq(x, z, "a prefix of len bytes is the same string");
	a[0] = 'X';
	cr_assert_str_eq(x, "train_step", "the pool keeps its own copy");
	cr_assert_neq(strpool_str(&p, "train"), x);
	cr_assert_null(strpool_str(&p, NULL));
	strpool_release(&p);
}

Test(strpool, embedded_nul_and_empty)
{
	struct strpool p = STRPOOL_INIT;
	const char *e = strpool_intern(&p, "", 0), *n = strpool_intern(&p, "a\0b", 3);

	cr_assert_str_eq(e, "");
	cr_assert(!memcmp(n, "a\0b", 4));
	cr_assert_neq(strpool_intern(&p, "a\0c", 3), n, "bytes after a NUL count");
	strpool_release(&p);
}

/* A worker's pool moved into the model's: its strings live on there, the model's block keeps filling. */
Test(strpool, adopt_moves_the_strings)
{
	struct strpool into = STRPOOL_INIT, from = STRPOOL_INIT;
	const char *mine = strpool_str(&into, "mine"), *theirs[3];
	size_t bytes;
	char big[100000];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	theirs[0] = strpool_str(&from, "graph constant");
	theirs[1] = strpool_str(&from, big);  /* a block of its own */
	theirs[2] = strpool_str(&from, "0.1");
	bytes = into.bytes + from.bytes;
	strpool_adopt(&into, &from);
	cr_assert_eq(into.bytes, bytes);
	cr_assert_null(from.blocks, "from is empty");
	cr_assert_eq(from.used, 0);
	cr_assert_str_eq(theirs[0], "graph constant");
	cr_assert_str_eq(theirs[1], big);
	cr_assert_str_eq(theirs[2], "0.1");
	cr_assert_eq(strpool_str(&into, "mine"), mine, "into's own strings stay interned");
	cr_assert_eq(strpool_str(&into, "next") - mine, 5, "into's newest block keeps filling");
	strpool_adopt(&into, &from);  /* an empty pool: nothing moves */
	cr_assert_eq(into.bytes, bytes + 5);
	strpool_release(&into);
}

Test(strpool, many_and_long_strings_survive_growth)
{
	struct strpool p = STRPOOL_INIT;
	static const char *keep[20000];
	char buf[64];
	size_t big = 200000;
	char *longtext = malloc(big);
	const char *l;

	cr_assert_not_null(longtext);
	memset(longtext, 'x', big);
	for (int i = 0; i < 20000; i++) {
		snprintf(buf, sizeof(buf), "name-%d", i);
		keep[i] = strpool_str(&p, buf);
		cr_assert_not_null(keep[i]);
	}
	l = strpool_intern(&p, longtext, big);
	cr_assert_not_null(l);
	cr_assert_eq(strlen(l), big);
	for (int i = 0; i < 20000; i++) {
		snprintf(buf, sizeof(buf), "name-%d", i);
		cr_assert_str_eq(keep[i], buf);
		cr_assert_eq(strpool_str(&p, buf), keep[i]);
	}
	cr_assert_eq(p.used, 20001);
	free(longtext);
	strpool_release(&p);
	cr_assert_eq(p.used, 0);
	cr_assert_null(p.blocks);
}

Test(strpool, limit_bounds_the_bytes)
{
	struct strpool p = STRPOOL_INIT;

	p.limit = 10;
	cr_assert_not_null(strpool_str(&p, "abcd"));    /* 5 bytes */
	cr_assert_not_null(strpool_str(&p, "abcd"));    /* interned: no new bytes */
	cr_assert_not_null(strpool_str(&p, "efgh"));    /* 10 */
	cr_assert_null(strpool_str(&p, "i"), "over the limit");
	cr_assert_null(strpool_intern(&p, "x", SIZE_MAX), "a length that overflows");
	cr_assert_str_eq(strpool_printf(&p, "%s", "abcd"), "abcd");
	strpool_release(&p);
	cr_assert_eq(p.limit, 10, "release keeps the limit");
}

Test(grow_array, doubles_zeroes_and_refuses_overflow)
{
	int *a = NULL;
	size_t n = 0, cap = 0;

	for (int i = 0; i < 1000; i++) {
		cr_assert_eq(ARRAY_GROW(a, n, cap), 0);
		cr_assert_eq(a[n], 0, "new slots are zeroed");
		a[n++] = i;
	}
	cr_assert_eq(cap, 1024);
	cr_assert_eq(a[999], 999);
	cr_assert_eq(grow_array((void **)&a, &cap, SIZE_MAX / 2, sizeof(*a)), -1);
	cr_assert_eq(cap, 1024, "a failed grow leaves the array as it was");
	cr_assert_eq(a[500], 500);
	free(a);
}
