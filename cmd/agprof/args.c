/* args.c - what the subcommands share: arguments of those that read one recording, stderr under curses. */
#include "builtin.h"
#include "check.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

const struct opt rules_options[] = {
	{ "rules", RULES_DIR, "DIR", "also load the rule files of DIR (docs/rules.md)" },
	{ "set", RULES_SET, "RULE.NAME=VALUE", "change a rule's threshold, e.g. retracing.max_traces=5" },
	OPT_END,
};

const struct opt help_options[] = {
	OPT_HELP,
	OPT_END,
};

int rules_option(void *ctx, int key, const char *value)
{
	struct rules_args *ra = ctx;
	const char **p;

	if (key == RULES_DIR) {
		ra->ao.rules_dir = value;
		return 0;
	}
	if (!(p = realloc(ra->sets, (ra->ao.nsets + 1) * sizeof(*p))))
		return error("out of memory");
	ra->sets = p;
	ra->sets[ra->ao.nsets++] = value;
	ra->ao.sets = ra->sets;
	return 0;
}

void rules_args_release(struct rules_args *ra)
{
	free(ra->sets);
	ra->sets = NULL;
}

const char *one_recording(const struct opt_cmd *cmd, int argc, char **argv, int first)
{
	if (first >= argc) {
		error("no recording given; see 'agprof %s --help'", cmd->name);
		return NULL;
	}
	if (first + 1 < argc) {
		error("one recording at a time ('%s' and '%s')", argv[first], argv[first + 1]);
		return NULL;
	}
	return argv[first];
}

int parse_recording_command(const struct opt_cmd *cmd, int argc, char **argv, const char **path)
{
	int first = opt_parse(cmd, argc, argv);

	if (first == OPT_DONE)
		return -1;
	if (first < 0 || !(*path = one_recording(cmd, argc, argv, first)))
		return EXIT_USAGE;
	return 0;
}

int check_exit_code(int result)
{
	switch ((enum check_result)result) {
	case CHECK_HELD:
		return EXIT_OK;
	case CHECK_CROSSED:
		return EXIT_VIOLATION;
	case CHECK_BAD_INPUT:
		return EXIT_USAGE;
	case CHECK_FAILED:
		break;
	}
	return EXIT_INTERNAL;
}

/*
 * While curses owns the terminal, what the analysis or the scan print to
 * stderr would land in the middle of the screen: keep it in a temporary
 * file and print it once the terminal is back.
 */
int stderr_hold(FILE **tmp)
{
	int saved;

	*tmp = tmpfile();
	if (!*tmp)
		return -1;
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	if (saved < 0 || dup2(fileno(*tmp), STDERR_FILENO) < 0) {
		if (saved >= 0)
			close(saved);
		fclose(*tmp);
		*tmp = NULL;
		return -1;
	}
	return saved;
}

void stderr_release(FILE *tmp, int saved)
{
	char buf[4096];
	size_t n;

	if (!tmp)
		return;
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	while ((n = fread(buf, 1, sizeof(buf), tmp)) > 0)
		fwrite(buf, 1, n, stderr);
	fclose(tmp);
}
