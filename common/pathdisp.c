/* pathdisp.c - short source paths for people; see pathdisp.h. */
#include "pathdisp.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* After the last occurrence of dir ("/site-packages/") in file, or NULL. */
static const char *after_last(const char *file, const char *dir)
{
	const char *hit = NULL, *p = file;

	while ((p = strstr(p, dir))) {
		hit = p + strlen(dir);
		p++;
	}
	return hit && *hit ? hit : NULL;
}

/* After ".../lib/pythonX.Y/" (also lib64), or NULL. */
static const char *after_stdlib(const char *file)
{
	static const char *const roots[] = { "/lib/python", "/lib64/python", NULL };

	for (int i = 0; roots[i]; i++) {
		const char *p = strstr(file, roots[i]), *slash;

		if (p && isdigit((unsigned char)p[strlen(roots[i])]) && (slash = strchr(p + strlen(roots[i]), '/')) &&
		    slash[1])
			return slash + 1;
	}
	return NULL;
}

const char *path_display(const char *file, const char *cwd)
{
	const char *tail;
	size_t n;

	if (!file)
		return NULL;
	/* nearest package root: a venv inside a project is still installed code */
	if ((tail = after_last(file, "/site-packages/")) || (tail = after_last(file, "/dist-packages/")))
		return tail;
	n = cwd ? strlen(cwd) : 0;
	if (n > 1 && !strncmp(file, cwd, n) && file[n] == '/')
		return file + n + 1;
	if ((tail = after_stdlib(file)))
		return tail;
	return file;
}

int path_is_installed(const char *file)
{
	return file && (strstr(file, "/site-packages/") || strstr(file, "/dist-packages/"));
}

int path_is_framework(const char *file)
{
	static const char *const dirs[] = { "/tensorflow/", "/keras/", "/tf_keras/", "/absl/", "/tensorflow_core/",
					    "/tensorflow_estimator/", NULL };

	for (int i = 0; file && dirs[i]; i++)
		if (strstr(file, dirs[i]))
			return 1;
	return 0;
}

size_t text_columns(const char *text)
{
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)text; p && *p; p++)
		n += (*p & 0xC0) != 0x80;
	return n;
}

const char *text_fit_left(char *buf, size_t cap, const char *text, size_t width)
{
	size_t cols = text_columns(text);
	const char *p = text;

	if (!cap)
		return buf;
	if (cols <= width || width < 4) {
		snprintf(buf, cap, "%s", text ? text : "");
		return buf;
	}
	/* skip the first cols - (width - 3) code points */
	for (size_t skip = cols - (width - 3); *p && skip; ) {
		p++;
		if ((*(const unsigned char *)p & 0xC0) != 0x80)
			skip--;
	}
	snprintf(buf, cap, "...%s", p);
	return buf;
}
