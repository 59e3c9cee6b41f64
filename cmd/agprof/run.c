/* run.c - placeholder, replaced by the launcher. */
#include "builtin.h"
int cmd_run(int argc, char **argv) { (void)argc; (void)argv; return EXIT_INTERNAL; }
