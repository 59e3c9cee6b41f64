/*
 * test-options.c - common/options: one table parses argv (getopt_long) and
 * writes the --help; the behaviours every subcommand relies on.
 */
#include "options.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { K_FORMAT = OPT_KEY_BASE, K_FLAG };

static const struct opt table[] = {
	OPT_TEXT("options:"),
	{ "format", K_FORMAT, "FMT", "the format" },
	{ "output", 'o', "FILE", "where to write;\nthe second line" },
	{ "flag", K_FLAG, NULL, "a flag" },
	{ "hidden", 'x', NULL, NULL },
	OPT_HELP,
	OPT_END,
};

struct seen {
	char log[256];
};

static int handler(void *ctx, int key, const char *value)
{
	struct seen *s = ctx;
	size_t n = strlen(s->log);

	snprintf(s->log + n, sizeof(s->log) - n, "%d=%s;", key, value ? value : "-");
	return 0;
}

/* stderr off (quiet != 0) and back on: the error lines are not what is tested here. */
static void quiet_stderr(int on)
{
	static int saved = -1;

	fflush(stderr);
	if (on) {
		int null = open("/dev/null", O_WRONLY);

		saved = dup(STDERR_FILENO);
		dup2(null, STDERR_FILENO);
		close(null);
	} else {
		dup2(saved, STDERR_FILENO);
		close(saved);
	}
}

static int parse(struct seen *s, int stop, int argc, char **argv)
{
	struct opt_cmd cmd = { "test", "usage: test\n", "end\n", stop, { { table, handler, s } } };
	int rc;

	quiet_stderr(1);
	rc = opt_parse(&cmd, argc, argv);
	quiet_stderr(0);
	return rc;
}

Test(options, options_and_arguments_mix_and_arguments_come_last)
{
	struct seen s = { "" };
	char *argv[] = { "test", "rec", "--format", "json", "-o", "f", "--flag", "--format=csv", NULL };
	int first = parse(&s, 0, 8, argv);

	cr_assert_eq(first, 7);
	cr_assert_str_eq(argv[first], "rec");
	cr_assert_str_eq(s.log, "256=json;111=f;257=-;256=csv;");
}

Test(options, stop_at_argument_leaves_the_program_alone)
{
	struct seen s = { "" };
	char *argv[] = { "test", "-o", "f", "prog", "--format", "x", NULL };
	int first = parse(&s, 1, 6, argv);

	cr_assert_eq(first, 3);
	cr_assert_str_eq(argv[first], "prog");
	cr_assert_str_eq(argv[first + 1], "--format");
	cr_assert_str_eq(s.log, "111=f;");
}

Test(options, double_dash_ends_the_options)
{
	struct seen s = { "" };
	char *argv[] = { "test", "--flag", "--", "--format", NULL };
	int first = parse(&s, 1, 4, argv);

	cr_assert_eq(first, 3);
	cr_assert_str_eq(argv[first], "--format");
}

Test(options, errors)
{
	struct seen s = { "" };
	char *unknown[] = { "test", "--bogus", NULL };
	char *missing[] = { "test", "--format", NULL };
	char *novalue[] = { "test", "--flag=1", NULL };
	char *badshort[] = { "test", "-q", NULL };

	cr_assert_eq(parse(&s, 0, 2, unknown), OPT_FAILED);
	cr_assert_eq(parse(&s, 0, 2, missing), OPT_FAILED);
	cr_assert_eq(parse(&s, 0, 2, novalue), OPT_FAILED);
	cr_assert_eq(parse(&s, 0, 2, badshort), OPT_FAILED);
	cr_assert_str_eq(s.log, "");
}

Test(options, help_is_generated_from_the_table)
{
	struct opt_cmd cmd = { "test", "usage: test\n", "end\n", 0, { { table, handler, NULL } } };
	char buf[2048] = "";
	FILE *f = tmpfile();

	cr_assert_not_null(f);
	opt_print_help(&cmd, f);
	rewind(f);
	buf[fread(buf, 1, sizeof(buf) - 1, f)] = '\0';
	fclose(f);
	cr_assert_str_eq(buf, "usage: test\n"
			      "options:\n"
			      "  --format FMT            the format\n"
			      "  -o, --output FILE       where to write;\n"
			      "                          the second line\n"
			      "  --flag                  a flag\n"
			      "  -h, --help              show this help\n"
			      "end\n");
}

Test(options, choice)
{
	static const char *const names[] = { "text", "json", NULL };
	int rc;

	cr_assert_eq(opt_choice("format", "json", names), 1);
	quiet_stderr(1);
	rc = opt_choice("format", "xml", names);
	quiet_stderr(0);
	cr_assert_eq(rc, -1);
	cr_assert_str_eq(opt_name(table, 'o'), "output");
}
