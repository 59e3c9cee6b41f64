/* options.c - see options.h. */
#include "options.h"
#include "util.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* Column where the help of each option starts. */
#define HELP_COLUMN 26

static size_t count_rows(const struct opt_cmd *cmd)
{
	size_t n = 0;

	for (size_t s = 0; s < sizeof(cmd->sets) / sizeof(cmd->sets[0]) && cmd->sets[s].opts; s++)
		for (const struct opt *o = cmd->sets[s].opts; o->name || o->help; o++)
			n += o->name != NULL;
	return n;
}

/* The row of key (and the set it belongs to), or NULL. */
static const struct opt *find_key(const struct opt_cmd *cmd, int key, const struct opt_set **set)
{
	for (size_t s = 0; s < sizeof(cmd->sets) / sizeof(cmd->sets[0]) && cmd->sets[s].opts; s++)
		for (const struct opt *o = cmd->sets[s].opts; o->name || o->help; o++)
			if (o->name && o->key == key) {
				*set = &cmd->sets[s];
				return o;
			}
	return NULL;
}

/* getopt_long's tables: longs[] (terminated) and the short-option string. */
static int build_tables(const struct opt_cmd *cmd, struct option *longs, char *shorts)
{
	size_t k = 0, c = 0;

	shorts[c++] = cmd->stop_at_argument ? '+' : '-';
	shorts[c++] = ':';  /* a missing value returns ':', not '?' */
	for (size_t s = 0; s < sizeof(cmd->sets) / sizeof(cmd->sets[0]) && cmd->sets[s].opts; s++)
		for (const struct opt *o = cmd->sets[s].opts; o->name || o->help; o++) {
			if (!o->name)
				continue;
			longs[k++] = (struct option){ o->name, o->value ? required_argument : no_argument, NULL, o->key };
			if (o->key > 0 && o->key < OPT_KEY_BASE) {
				shorts[c++] = (char)o->key;
				if (o->value)
					shorts[c++] = ':';
			}
		}
	longs[k] = (struct option){ NULL, 0, NULL, 0 };
	shorts[c] = '\0';
	return 0;
}

/* The error of getopt_long's '?' or ':' for the word that caused it. */
static int option_error(const struct opt_cmd *cmd, int rc, const char *word)
{
	const struct opt_set *set;
	const struct opt *o = optopt ? find_key(cmd, optopt, &set) : NULL;

	if (rc == ':')
		return error("option '%s' needs a value", word);
	if (o && !o->value)
		return error("option '--%s' takes no value", o->name);
	if (optopt && optopt < OPT_KEY_BASE && !o)
		return error("unknown option '-%c'; see 'agprof%s%s --help'", optopt, *cmd->name ? " " : "", cmd->name);
	return error("unknown option '%s'; see 'agprof%s%s --help'", word, *cmd->name ? " " : "", cmd->name);
}

/* Arguments that are not options, in order, as getopt's "-" mode returns them (key 1). */
static int parse_loop(const struct opt_cmd *cmd, int argc, char **argv, struct option *longs, const char *shorts,
		      char **args, int *nargs)
{
	int rc;

	optind = 0;  /* glibc: start afresh, also after an earlier parse */
	opterr = 0;
	while ((rc = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		const struct opt_set *set;
		const struct opt *o;

		if (rc == 1) {
			args[(*nargs)++] = optarg;
			continue;
		}
		if (rc == '?' || rc == ':')
			return option_error(cmd, rc, argv[optind - 1]);
		if (rc == 'h' && cmd->usage && (o = find_key(cmd, 'h', &set)) && !strcmp(o->name, "help")) {
			opt_print_help(cmd, stdout);
			return OPT_DONE;
		}
		if (!(o = find_key(cmd, rc, &set)) || set->handle(set->ctx, rc, optarg) != 0)
			return OPT_FAILED;
	}
	return 0;
}

int opt_parse(const struct opt_cmd *cmd, int argc, char **argv)
{
	size_t n = count_rows(cmd);
	struct option *longs = calloc(n + 1, sizeof(*longs));
	char *shorts = calloc(2 * n + 3, 1);
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	int nargs = 0, rc, first;

	if (!longs || !shorts || !args) {
		rc = error("out of memory");
		goto out;
	}
	build_tables(cmd, longs, shorts);
	rc = parse_loop(cmd, argc, argv, longs, shorts, args, &nargs);
	if (rc != 0)
		goto out;
	/*
	 * "-" mode hands back the arguments as it meets them: put them at the
	 * end, in order, followed (for stop_at_argument) by what came after.
	 */
	first = optind - nargs;
	memmove(argv + first + nargs, argv + optind, (size_t)(argc - optind) * sizeof(*argv));
	memcpy(argv + first, args, (size_t)nargs * sizeof(*argv));
	rc = first;
out:
	free(longs);
	free(shorts);
	free(args);
	return rc;
}

static void print_row(const struct opt *o, FILE *out)
{
	char left[128];
	int n;

	if (!o->name) {
		fprintf(out, "%s\n", o->help);
		return;
	}
	if (o->key > 0 && o->key < OPT_KEY_BASE)
		n = snprintf(left, sizeof(left), "  -%c, --%s%s%s", o->key, o->name, o->value ? " " : "",
			     o->value ? o->value : "");
	else
		n = snprintf(left, sizeof(left), "  --%s%s%s", o->name, o->value ? " " : "", o->value ? o->value : "");
	fputs(left, out);
	if (n + 2 > HELP_COLUMN)
		fprintf(out, "\n%*s", HELP_COLUMN, "");
	else
		fprintf(out, "%*s", HELP_COLUMN - n, "");
	for (const char *h = o->help; *h; h++) {
		fputc(*h, out);
		if (*h == '\n')
			fprintf(out, "%*s", HELP_COLUMN, "");
	}
	fputc('\n', out);
}

void opt_print_help(const struct opt_cmd *cmd, FILE *out)
{
	fputs(cmd->usage, out);
	for (size_t s = 0; s < sizeof(cmd->sets) / sizeof(cmd->sets[0]) && cmd->sets[s].opts; s++)
		for (const struct opt *o = cmd->sets[s].opts; o->name || o->help; o++)
			if (o->help)
				print_row(o, out);
	if (cmd->epilogue)
		fputs(cmd->epilogue, out);
}

const char *opt_name(const struct opt *opts, int key)
{
	for (const struct opt *o = opts; o->name || o->help; o++)
		if (o->name && o->key == key)
			return o->name;
	return "?";
}

int opt_choice(const char *what, const char *value, const char *const *names)
{
	char list[256];
	size_t n = 0;

	for (int i = 0; names[i]; i++)
		if (!strcmp(value, names[i]))
			return i;
	list[0] = '\0';
	for (int i = 0; names[i] && n < sizeof(list); i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "", names[i]);
	return error("unknown %s '%s' (%s)", what, value, list);
}
