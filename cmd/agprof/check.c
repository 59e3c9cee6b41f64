/* check.c - placeholder until the check command lands. */
#include "builtin.h"

#include <stdio.h>

int cmd_check(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("error: 'agprof check' is not built yet\n", stderr);
	return EXIT_INTERNAL;
}
