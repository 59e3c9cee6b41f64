/* term.h - the terminal in curses mode, as agprof view and agprof top set it up. */
#ifndef AGPROF_TUI_TERM_H
#define AGPROF_TUI_TERM_H

#include <curses.h>

/*
 * newterm() on stdout/stdin in cbreak, no echo, keypad, no cursor; NULL
 * after an error line that ends with instead ("try 'agprof report X'").
 */
SCREEN *term_open(const char *instead);

#endif
