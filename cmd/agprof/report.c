/* report.c - placeholder until the report command lands. */
#include "builtin.h"

#include <stdio.h>

int cmd_report(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("error: 'agprof report' is not built yet\n", stderr);
	return EXIT_INTERNAL;
}
