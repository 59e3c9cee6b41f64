/* request.c - the key map and key names, from the table in request.h. */
#include "request.h"

#include <stdio.h>

const struct request_info request_info[] = {
#define REQ_INFO(name, section, help, k1, k2, k3) { REQ_##name, section, help, { k1, k2, k3 } },
	REQ_TABLE(REQ_INFO)
#undef REQ_INFO
};
const size_t request_count = sizeof(request_info) / sizeof(request_info[0]);

enum request request_of_key(int key)
{
	if (key == 0)
		return REQ_NONE;
	for (size_t i = 0; i < request_count; i++)
		for (int k = 0; k < 3; k++)
			if (request_info[i].keys[k] == key)
				return request_info[i].req;
	return REQ_NONE;
}

const char *key_label(int key)
{
	static char buf[16];
	static const struct {
		int key;
		const char *name;
	} names[] = {
		{ KEY_LEFT, "Left" },   { KEY_RIGHT, "Right" }, { KEY_UP, "Up" },         { KEY_DOWN, "Down" },
		{ KEY_HOME, "Home" },   { KEY_END, "End" },     { KEY_PPAGE, "PgUp" },    { KEY_NPAGE, "PgDn" },
		{ KEY_ENTER, "Enter" }, { '\n', "Enter" },      { '\r', "Enter" },        { 27, "Esc" },
		{ ' ', "Space" },       { KEY_SLEFT, "S-Left" }, { KEY_SRIGHT, "S-Right" }, { KEY_BACKSPACE, "Bksp" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].key == key)
			return names[i].name;
	if (key >= KEY_F(1) && key <= KEY_F(12))
		snprintf(buf, sizeof(buf), "F%d", key - KEY_F(0));
	else if (key > 0 && key < 32)
		snprintf(buf, sizeof(buf), "^%c", key + '@');
	else if (key > 32 && key < 127)
		snprintf(buf, sizeof(buf), "%c", key);
	else
		snprintf(buf, sizeof(buf), "#%d", key);
	return buf;
}
