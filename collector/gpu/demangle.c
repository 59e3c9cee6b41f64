/*
 * demangle.c - readable kernel names.
 *
 * CUDA kernels carry C++ mangled names (_Z10add_kernelPfi).  The C++ runtime's
 * __cxa_demangle turns them back into source form; we take it from the
 * process when libstdc++ is already loaded (every CUDA runtime pulls it in)
 * and never load it ourselves.  Names are cached by the pointer CUPTI hands
 * out, since CUPTI shares one string among all records of a kernel: a run of
 * a million launches of ten kernels demangles ten times.
 */
#include "gpu_internal.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

struct gpu_name_slot {
	const char *key;      /* CUPTI's pointer */
	char *mangled;        /* copy of the text at key, to detect reuse */
	char *text;           /* demangled (or a copy of mangled) */
};

static uint64_t hash_ptr(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

gpu_demangle_fn gpu_demangler(void)
{
	void *sym = dlsym(RTLD_DEFAULT, "__cxa_demangle");

	if (!sym) {
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD);
		if (h)
			sym = dlsym(h, "__cxa_demangle");
		/* h stays referenced: the symbol must outlive this call. */
	}
	return (gpu_demangle_fn)sym;
}

void gpu_names_init(struct gpu_names *n, gpu_demangle_fn demangle)
{
	memset(n, 0, sizeof(*n));
	n->demangle = demangle;
}

static char *make_text(struct gpu_names *n, const char *name)
{
	if (n->demangle && name[0] == '_' && name[1] == 'Z') {
		int status = -1;
		char *d = n->demangle(name, NULL, NULL, &status);
		if (d && status == 0)
			return d;
		free(d);
	}
	return strdup(name);
}

static int grow(struct gpu_names *n)
{
	size_t cap = n->cap ? n->cap * 2 : 64;
	struct gpu_name_slot *s = calloc(cap, sizeof(*s));

	if (!s)
		return -1;
	for (size_t i = 0; i < n->cap; i++) {
		if (!n->slots[i].key)
			continue;
		size_t j = hash_ptr(n->slots[i].key) & (cap - 1);
		while (s[j].key)
			j = (j + 1) & (cap - 1);
		s[j] = n->slots[i];
	}
	free(n->slots);
	n->slots = s;
	n->cap = cap;
	return 0;
}

const char *gpu_names_get(struct gpu_names *n, const char *name)
{
	size_t i;

	if (!name)
		return NULL;
	if ((n->used + 1) * 2 > n->cap && grow(n) < 0)
		return name;
	i = hash_ptr(name) & (n->cap - 1);
	while (n->slots[i].key) {
		struct gpu_name_slot *s = &n->slots[i];
		if (s->key == name) {
			if (strcmp(s->mangled, name) == 0)
				return s->text;
			/* Same address, new text: CUPTI freed and reused it. */
			char *m = strdup(name), *t = make_text(n, name);
			if (!m || !t) {
				free(m);
				free(t);
				return name;
			}
			free(s->mangled);
			free(s->text);
			s->mangled = m;
			s->text = t;
			return t;
		}
		i = (i + 1) & (n->cap - 1);
	}
	char *m = strdup(name), *t = make_text(n, name);
	if (!m || !t) {
		free(m);
		free(t);
		return name;
	}
	n->slots[i].key = name;
	n->slots[i].mangled = m;
	n->slots[i].text = t;
	n->used++;
	return t;
}

void gpu_names_release(struct gpu_names *n)
{
	for (size_t i = 0; i < n->cap; i++) {
		free(n->slots[i].mangled);
		free(n->slots[i].text);
	}
	free(n->slots);
	memset(n, 0, sizeof(*n));
}
