/* view.c - placeholder until the view command lands. */
#include "builtin.h"

#include <stdio.h>

int cmd_view(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("error: 'agprof view' is not built yet\n", stderr);
	return EXIT_INTERNAL;
}
