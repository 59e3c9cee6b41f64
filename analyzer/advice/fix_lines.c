/*
 * fix_lines.c - the legacy line reader (fix_edit.h): one Python line read
 * as text, for files the parser's facts do not cover (a recording made
 * before them, a file that did not parse, a notebook cell).  Every edit
 * with facts reads positions from them instead.
 */
#include "fix_edit.h"

#include <ctype.h>
#include <string.h>

size_t text_indent(const char *s)
{
	size_t n = strspn(s, " \t");

	return n;
}

int text_blank(const char *s)
{
	s += strspn(s, " \t");
	return !*s || *s == '#';
}

size_t text_ident_len(const char *s)
{
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789");
}

int text_ident_char(int ch)
{
	return isalnum(ch) || ch == '_';
}

/* Index of the bracket closing the one at open, or -1 (strings are skipped). */
long text_match_close(const char *s, size_t open)
{
	int depth = 0;
	char quote = 0;

	for (size_t i = open; s[i]; i++) {
		char ch = s[i];

		if (quote) {
			if (ch == '\\' && s[i + 1])
				i++;
			else if (ch == quote)
				quote = 0;
			continue;
		}
		if (ch == '"' || ch == '\'')
			quote = ch;
		else if (ch == '#')
			return -1;
		else if (ch == '(' || ch == '[' || ch == '{')
			depth++;
		else if (ch == ')' || ch == ']' || ch == '}') {
			if (--depth == 0)
				return (long)i;
		}
	}
	return -1;
}

/* Split the arguments between s[open] '(' and s[close] ')'. Returns their number, -1 when too many. */
int text_split_args(const char *s, size_t open, size_t close, struct text_arg *args)
{
	int n = 0;
	size_t i = open + 1;

	while (i < close) {
		size_t a = i, e;
		int depth = 0;
		char quote = 0;

		for (; i < close; i++) {
			char ch = s[i];

			if (quote) {
				if (ch == '\\')
					i++;
				else if (ch == quote)
					quote = 0;
			} else if (ch == '"' || ch == '\'') {
				quote = ch;
			} else if (ch == '(' || ch == '[' || ch == '{') {
				depth++;
			} else if (ch == ')' || ch == ']' || ch == '}') {
				depth--;
			} else if (ch == ',' && depth == 0) {
				break;
			}
		}
		e = i;
		while (a < e && isspace((unsigned char)s[a]))
			a++;
		while (e > a && isspace((unsigned char)s[e - 1]))
			e--;
		if (e > a) {
			size_t k = a;

			if (n == FIX_MAX_ARGS)
				return -1;
			while (k < e && text_ident_char((unsigned char)s[k]))
				k++;
			args[n].start = a;
			args[n].end = e;
			args[n].kw_len = 0;
			args[n].value = a;
			if (k > a && k < e && s[k] == '=' && s[k + 1] != '=') {
				args[n].kw_len = k - a;
				args[n].value = k + 1 + strspn(s + k + 1, " ");
			}
			n++;
		}
		i++;
	}
	return n;
}

/* Position of the first "name(" call in s at or after from whose callee is name (after '.' or a non-identifier). */
long text_find_call(const char *s, const char *name, size_t from)
{
	size_t n = strlen(name);

	for (const char *p = strstr(s + from, name); p; p = strstr(p + 1, name)) {
		size_t at = (size_t)(p - s);

		if (at > 0 && text_ident_char((unsigned char)s[at - 1]))
			continue;
		if (p[n] == '(')
			return (long)(at + n);
	}
	return -1;
}

