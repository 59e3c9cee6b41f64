/* tui.c - placeholder translation unit until the timeline view lands. */
#include <curses.h>

int tui_placeholder(void);
int tui_placeholder(void)
{
	return COLS;
}
