/* term.c - the terminal in curses mode (term.h). */
#include "term.h"
#include "util.h"

#include <stdlib.h>

SCREEN *term_open(const char *instead)
{
	SCREEN *scr = newterm(NULL, stdout, stdin);

	if (!scr) {
		error("cannot use the terminal '%s'; %s", getenv("TERM") ? getenv("TERM") : "", instead);
		return NULL;
	}
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	return scr;
}
