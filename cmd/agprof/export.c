/* export.c - placeholder until the export command lands. */
#include "builtin.h"

#include <stdio.h>

int cmd_export(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("error: 'agprof export' is not built yet\n", stderr);
	return EXIT_INTERNAL;
}
