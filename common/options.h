/*
 * options.h - one option table per subcommand: getopt_long parses argv from
 * it and the --help text is generated from the same rows, so an option
 * cannot be accepted without being documented, or the reverse.
 *
 * How to add an option to a subcommand (cmd/agprof/<name>.c):
 *   1. Add a row to the subcommand's table, before OPT_END:
 *          { "top", OPT_TOP, "N", "rows per table in text output" },
 *      name: the long name without "--";
 *      key: the short letter ('o' gives -o too), or a constant of the
 *           subcommand's own enum counting up from OPT_KEY_BASE (no letter);
 *      value: the value's name in the help ("FILE"), NULL for a flag;
 *      help: one line, '\n' continues it on the next line, aligned.
 *   2. Handle the key in the subcommand's handler: a `case OPT_TOP:` in the
 *      switch of its `static int <cmd>_option(void *ctx, int key, const char
 *      *value)`, returning 0, or -1 after error().
 * A new subcommand: cmd/agprof/<name>.c with cmd_<name>() that fills a
 * struct opt_cmd (usage, epilogue, its tables) and calls opt_parse, or
 * parse_recording_command when it reads one recording (cmd/agprof/args.c);
 * a row in main.c's commands[] (its summary is the line in `agprof --help`).
 * Keys must differ across the tables one subcommand combines (run: its own
 * and check_options; report and view: theirs, rules_options, help_options):
 * each table's enum starts at its own offset from OPT_KEY_BASE.
 * OPT_TEXT("sections:") puts a heading or note line in the help; every table
 * has OPT_HELP (-h, --help) and ends with OPT_END.  The help goes to stdout
 * and the subcommand exits 0 (opt_parse returns OPT_DONE).
 */
#ifndef AGPROF_OPTIONS_H
#define AGPROF_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

struct opt {
	const char *name;   /* long name without "--"; NULL: a help text line */
	int key;            /* short letter, or OPT_KEY_BASE and up */
	const char *value;  /* the value's name in the help; NULL: a flag */
	const char *help;   /* NULL: accepted but not listed */
};

#define OPT_KEY_BASE 256
#define OPT_TEXT(text) { NULL, 0, NULL, text }
#define OPT_HELP { "help", 'h', NULL, "show this help" }
#define OPT_END { NULL, 0, NULL, NULL }

/* Called once per option found, in order; 0, or -1 after printing an error. */
typedef int opt_handler(void *ctx, int key, const char *value);

/* One table and the handler of its keys; a subcommand may combine tables. */
struct opt_set {
	const struct opt *opts;
	opt_handler *handle;
	void *ctx;
};

struct opt_cmd {
	const char *name;          /* "report", for "see 'agprof report --help'"; "" for agprof itself */
	const char *usage;         /* help text above the tables; NULL: -h, --help go to the handler */
	const char *epilogue;      /* help text below them */
	int stop_at_argument;      /* 1: options end at the first argument (run PROGRAM ARGS) */
	struct opt_set sets[3];    /* unused ones are { NULL } */
};

enum { OPT_FAILED = -1, OPT_DONE = -2 };

/*
 * Parse argv[1..argc) (argv[0] is the subcommand's name) against cmd's
 * tables.  Returns the index of the first argument that is not an option
 * (options and arguments may mix unless stop_at_argument: argv is permuted
 * so that the arguments come last), OPT_DONE after printing --help, or
 * OPT_FAILED after one error line (unknown option, missing value, or the
 * handler's own error).
 */
int opt_parse(const struct opt_cmd *cmd, int argc, char **argv);

/* Print cmd's help: usage, every table's rows, epilogue. */
void opt_print_help(const struct opt_cmd *cmd, FILE *out);

/*
 * The index of value in names (NULL-terminated), or -1 after the error
 * "unknown WHAT 'value' (name, name, ...)".
 */
int opt_choice(const char *what, const char *value, const char *const *names);

/* The long name of key in opts, or "?" (for messages). */
const char *opt_name(const struct opt *opts, int key);

#endif
