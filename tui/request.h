/*
 * request.h - every request a key can make, with its keys and help text.
 *
 * One X-macro table (after tig's REQ_INFO): the key map, the request enum
 * and the help screen all come from it, so a binding cannot exist without
 * its help line.  Habits follow perf report and htop: arrows and h/j/k/l
 * move, + and - zoom, / and F3 search, ? and F1 help, Esc goes back, q and
 * F10 quit.
 *
 * REQ(name, section, help, key1, key2, key3); unused keys are 0.
 */
#ifndef AGPROF_TUI_REQUEST_H
#define AGPROF_TUI_REQUEST_H

#include <curses.h>

#define KEY_CTRL(c) ((c) & 0x1f)

#define REQ_TABLE(REQ) \
	REQ(PAN_LEFT,      "Timeline", "Pan left",                                  KEY_LEFT, 'h', 0) \
	REQ(PAN_RIGHT,     "Timeline", "Pan right",                                 KEY_RIGHT, 'l', 0) \
	REQ(PAN_LEFT_FAR,  "Timeline", "Pan left by a screen",                       'H', 0, 0) \
	REQ(PAN_RIGHT_FAR, "Timeline", "Pan right by a screen",                      'L', 0, 0) \
	REQ(ZOOM_IN,       "Timeline", "Zoom in around the selection",              '+', 'w', '=') \
	REQ(ZOOM_OUT,      "Timeline", "Zoom out",                                   '-', 's', '_') \
	REQ(ZOOM_SEL,      "Timeline", "Zoom to the selected slice",                 'z', 0, 0) \
	REQ(ZOOM_ALL,      "Timeline", "Show the whole recording",                   'Z', '0', 0) \
	REQ(HOME,          "Timeline", "Go to the start of the recording",           KEY_HOME, 'g', 0) \
	REQ(END,           "Timeline", "Go to the end of the recording",             KEY_END, 'G', 0) \
	REQ(PREV_SLICE,    "Timeline", "Select the previous slice on the track",     ',', '<', KEY_SLEFT) \
	REQ(NEXT_SLICE,    "Timeline", "Select the next slice on the track",         '.', '>', KEY_SRIGHT) \
	REQ(NEXT_MARK,     "Timeline", "Next retrace or finding",                    'n', 0, 0) \
	REQ(PREV_MARK,     "Timeline", "Previous retrace or finding",                'N', 0, 0) \
	REQ(PEER,          "Timeline", "The same collective on the next rank (merged recordings)", 'c', 0, 0) \
	REQ(KIND_TRACE,    "Filter",   "Show/hide tracing slices",                   '1', 0, 0) \
	REQ(KIND_CALL,     "Filter",   "Show/hide graph function calls",             '2', 0, 0) \
	REQ(KIND_EAGER,    "Filter",   "Show/hide eager ops",                        '3', 0, 0) \
	REQ(KIND_BLACKBOX, "Filter",   "Show/hide py_function executions",           '4', 0, 0) \
	REQ(KIND_KERNEL,   "Filter",   "Show/hide GPU kernels",                      '5', 0, 0) \
	REQ(KIND_COPY,     "Filter",   "Show/hide GPU copies",                       '6', 0, 0) \
	REQ(KIND_CPUK,     "Filter",   "Show/hide CPU kernels (graph ops)",          '7', 0, 0) \
	REQ(KIND_ALL,      "Filter",   "Show every kind",                            'a', 0, 0) \
	REQ(UP,            "Move",     "Previous track / row",                       KEY_UP, 'k', 0) \
	REQ(DOWN,          "Move",     "Next track / row",                           KEY_DOWN, 'j', 0) \
	REQ(PAGE_UP,       "Move",     "Page up",                                    KEY_PPAGE, KEY_CTRL('b'), 0) \
	REQ(PAGE_DOWN,     "Move",     "Page down",                                  KEY_NPAGE, KEY_CTRL('f'), ' ') \
	REQ(ENTER,         "Move",     "Details of the slice; in a list: jump to its events", KEY_ENTER, '\n', '\r') \
	REQ(SEARCH,        "Views",    "Search slices by name",                      '/', KEY_F(3), 0) \
	REQ(FINDINGS,      "Views",    "Findings (the analyzer's recommendations)",  'f', KEY_F(2), 0) \
	REQ(FUNCTIONS,     "Views",    "Per-function table",                         'u', KEY_F(5), 0) \
	REQ(TIMELINE,      "Views",    "Back to the timeline",                       't', 27, KEY_BACKSPACE) \
	REQ(DETAILS_PANE,  "Views",    "Show/hide the details pane",                 'd', 0, 0) \
	REQ(HELP,          "Views",    "This help",                                  '?', KEY_F(1), 0) \
	REQ(REFRESH,       "Views",    "Redraw the screen",                          KEY_CTRL('l'), 0, 0) \
	REQ(QUIT,          "Views",    "Quit (a list view goes back to the timeline)", 'q', KEY_F(10), 0) \
	REQ(QUIT_ALL,      "Views",    "Quit from any view",                         'Q', 0, 0)

enum request {
	REQ_NONE = 0,
#define REQ_ENUM(name, section, help, k1, k2, k3) REQ_##name,
	REQ_TABLE(REQ_ENUM)
#undef REQ_ENUM
	REQ_MOUSE,   /* not bound to a key: the event is in tui.mouse */
	REQ_RESIZE,
	REQ__COUNT
};

struct request_info {
	enum request req;
	const char *section;
	const char *help;
	int keys[3];
};

/* The table, REQ_TABLE order; n entries. */
extern const struct request_info request_info[];
extern const size_t request_count;

/* The request bound to key, REQ_NONE when none. */
enum request request_of_key(int key);
/* Printable name of a key ("Left", "PgUp", "F1", "^L", "q"); static storage. */
const char *key_label(int key);

#endif
