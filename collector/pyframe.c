/*
 * pyframe.c - the user's source line for an event, read from the calling
 * thread's own Python frame chain.
 *
 * Nothing is linked against a Python version: libpython's functions are
 * resolved at run time, and the interpreter's frame layout (CPython 3.10's
 * frame objects, 3.11 and newer's interpreter frames) is learned once, with
 * the GIL held, by comparing raw memory with what the public API reports
 * (agp_py_discover_layout).  After that, finding
 * the call site is a handful of pointer loads per frame plus two per-thread
 * caches: "is this code object TensorFlow's" per code object, and
 * (code object, instruction) -> site id.  The hot path takes no GIL: the
 * frames walked belong to the calling thread, which is blocked in our hook.
 * When the layout cannot be confirmed, call sites are simply not recorded.
 */
#include "collector.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

typedef struct _object PyObject;

struct py_api {
	int resolved;       /* 1 ok, -1 Python absent */
	int (*IsInitialized)(void);
	const char *(*GetVersion)(void);
	int (*GILState_Check)(void);
	void *(*GILState_GetThisThreadState)(void);
	PyObject *(*Eval_GetFrame)(void);
	PyObject *(*Frame_GetCode)(PyObject *);
	PyObject *(*Frame_GetBack)(PyObject *);
	int (*Frame_GetLineNumber)(PyObject *);
	int (*Code_Addr2Line)(PyObject *, int);
	PyObject *(*Object_GetAttrString)(PyObject *, const char *);
	const char *(*Unicode_AsUTF8)(PyObject *);
	void (*DecRef)(PyObject *);
	void (*Err_Clear)(void);
	PyObject *(*Tuple_GetItem)(PyObject *, long);
	void *Code_Type;
};

static struct py_api py;

#define LAYOUT_TRIES 16

/* Raw layout, learned by agp_py_discover_layout. */
static struct {
	int ok;
	int tries;            /* discovery attempts; given up after LAYOUT_TRIES */
	int frame_objects;    /* 3.10: the chain is of PyFrameObjects, ip_off an int f_lasti */
	size_t ts_off;        /* PyThreadState -> current frame (or cframe) */
	int ts_indirect;      /* 3.11/3.12: through _PyCFrame */
	size_t cf_off;        /* current_frame within _PyCFrame */
	size_t code_off;      /* _PyInterpreterFrame (3.10: frame object): code object */
	size_t prev_off;      /* _PyInterpreterFrame: previous frame (3.10: f_back) */
	size_t ip_off;        /* _PyInterpreterFrame: instruction pointer (3.10: f_lasti) */
	size_t code_base;     /* code object: first instruction (3.10: 0, see frame_ip) */
	size_t filename_off;  /* code object: co_filename */
	size_t name_off;      /* code object: co_name */
	size_t str_data_off;  /* compact ASCII str: first character */
} L;

#define RESOLVE(field, sym) (py.field = (__typeof__(py.field))dlsym(RTLD_DEFAULT, sym))

int agp_py_available(void)
{
	if (py.resolved)
		return py.resolved > 0 && py.IsInitialized();
	RESOLVE(IsInitialized, "Py_IsInitialized");
	RESOLVE(GetVersion, "Py_GetVersion");
	RESOLVE(GILState_Check, "PyGILState_Check");
	RESOLVE(GILState_GetThisThreadState, "PyGILState_GetThisThreadState");
	RESOLVE(Eval_GetFrame, "PyEval_GetFrame");
	RESOLVE(Frame_GetCode, "PyFrame_GetCode");
	RESOLVE(Frame_GetBack, "PyFrame_GetBack");
	RESOLVE(Frame_GetLineNumber, "PyFrame_GetLineNumber");
	RESOLVE(Code_Addr2Line, "PyCode_Addr2Line");
	RESOLVE(Object_GetAttrString, "PyObject_GetAttrString");
	RESOLVE(Unicode_AsUTF8, "PyUnicode_AsUTF8");
	RESOLVE(DecRef, "Py_DecRef");
	RESOLVE(Err_Clear, "PyErr_Clear");
	RESOLVE(Tuple_GetItem, "PyTuple_GetItem");
	py.Code_Type = dlsym(RTLD_DEFAULT, "PyCode_Type");
	if (!py.IsInitialized || !py.GetVersion || !py.GILState_Check || !py.GILState_GetThisThreadState ||
	    !py.Eval_GetFrame || !py.Frame_GetCode || !py.Frame_GetBack || !py.Frame_GetLineNumber ||
	    !py.Code_Addr2Line || !py.Object_GetAttrString || !py.Unicode_AsUTF8 || !py.DecRef ||
	    !py.Err_Clear || !py.Tuple_GetItem || !py.Code_Type) {
		py.resolved = -1;
		return 0;
	}
	py.resolved = 1;
	return py.IsInitialized();
}

const char *agp_py_version(void)
{
	return agp_py_available() ? py.GetVersion() : NULL;
}

/* Read memory that may not be mapped (discovery only): 0 on success. */
static int safe_read(const void *addr, void *out, size_t len)
{
	struct iovec local = { out, len }, remote = { (void *)addr, len };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

static void *word_at(const void *base, size_t off)
{
	return *(void *const *)((const char *)base + off);
}

/* The interpreter frame behind a frame object (3.11+: f_frame after f_back; 3.10: itself). */
static void *iframe_of(PyObject *frame)
{
	return L.frame_objects ? (void *)frame : word_at(frame, 24);
}

/*
 * A frame's instruction as an address, code + code_base + byte offset, so
 * that (code, ip) keys the caches and frame_line on every version: 3.11+
 * keep the pointer; 3.10 keeps f_lasti, an index in 2-byte code units (-1
 * before the first instruction, which PyCode_Addr2Line takes as the
 * function's first line), made code + 2 * f_lasti with code_base 0.
 */
static uintptr_t frame_ip(const void *iframe, uintptr_t code)
{
	if (L.frame_objects)
		return code + (uintptr_t)(2 * (long)*(const int *)((const char *)iframe + L.ip_off));
	return (uintptr_t)word_at(iframe, L.ip_off);
}

static int find_word(const void *base, size_t nwords, const void *value, size_t *off)
{
	for (size_t i = 0; i < nwords; i++) {
		void *w;

		if (safe_read((const char *)base + i * 8, &w, 8) == 0 && w == value) {
			*off = i * 8;
			return 0;
		}
	}
	return -1;
}

static int discover_thread_state(void *ts, void *iframe)
{
	if (find_word(ts, 64, iframe, &L.ts_off) == 0) {
		L.ts_indirect = 0;
		return 0;
	}
	for (size_t i = 0; i < 64; i++) {
		void *cf, *w0, *w1;

		if (safe_read((char *)ts + i * 8, &cf, 8) != 0 || (uintptr_t)cf < 65536 || ((uintptr_t)cf & 7))
			continue;
		if (safe_read(cf, &w0, 8) == 0 && w0 == iframe) {
			L.ts_off = i * 8, L.ts_indirect = 1, L.cf_off = 0;
			return 0;
		}
		if (safe_read((char *)cf + 8, &w1, 8) == 0 && w1 == iframe) {
			L.ts_off = i * 8, L.ts_indirect = 1, L.cf_off = 8;
			return 0;
		}
	}
	return -1;
}

static int discover_string_layout(PyObject *str)
{
	const char *utf8 = py.Unicode_AsUTF8(str);
	size_t len;

	if (!utf8)
		return -1;
	len = strlen(utf8);
	for (size_t off = 24; off <= 72; off += 8) {
		char buf[4096];

		if (len + 1 > sizeof(buf) || safe_read((char *)str + off, buf, len + 1) != 0)
			continue;
		if (memcmp(buf, utf8, len) == 0 && buf[len] == '\0') {
			L.str_data_off = off;
			return 0;
		}
	}
	return -1;
}

/*
 * The instructions start at code + the code type's tp_basicsize: CPython
 * 3.11 to 3.13 declare that size as offsetof(PyCodeObject,
 * co_code_adaptive), the instructions being the variable part.  Searching
 * for the base by comparing code units failed once a frame's code was
 * quickened (3.11 rewrites RESUME and the adaptive opcodes after a few
 * calls and 3.12 at creation, and fills the inline caches): with a warm
 * frame on the stack (an import's, a training loop's) no call site was
 * ever recorded.  Lines alone cannot find it either: a call's neighbouring
 * code units are on its line.  So the size is read, and the line of every
 * frame on the stack must agree with the public API.
 */
static int code_type_basicsize(PyObject *code, size_t *size)
{
	static long (*long_as)(PyObject *);
	PyObject *type, *n = NULL;
	long v = -1;

	if (!long_as)
		long_as = (long (*)(PyObject *))dlsym(RTLD_DEFAULT, "PyLong_AsLong");
	if (!long_as || !(type = py.Object_GetAttrString(code, "__class__"))) {
		py.Err_Clear();
		return -1;
	}
	if ((n = py.Object_GetAttrString(type, "__basicsize__")))
		v = long_as(n);
	py.Err_Clear();
	if (n)
		py.DecRef(n);
	py.DecRef(type);
	if (v < 48 || v > 512)
		return -1;
	*size = (size_t)v;
	return 0;
}

/*
 * Whether the line of every frame on the stack (up to 12), read from raw
 * memory with code_base as the first instruction's offset, is the one the
 * public API gives; at least min_frames frames must be seen.
 */
static int stack_lines_agree(PyObject *frame, size_t base, int min_frames)
{
	PyObject *f = frame;
	int frames = 0, good = 1;

	for (int depth = 0; f && depth < 12 && good; depth++) {
		void *iframe = iframe_of(f);
		uintptr_t code = (uintptr_t)word_at(iframe, L.code_off);
		PyObject *back;

		good = py.Code_Addr2Line((PyObject *)code, (int)((long)(frame_ip(iframe, code) - code) - (long)base)) ==
		       py.Frame_GetLineNumber(f);
		frames++;
		back = py.Frame_GetBack(f);  /* new reference */
		if (f != frame)
			py.DecRef(f);
		f = back;
	}
	if (f && f != frame)
		py.DecRef(f);
	return good && frames >= min_frames;
}

static int discover_code_base(PyObject *frame)
{
	size_t base;

	if (L.frame_objects) {
		L.code_base = 0;  /* frame_ip counts from the code object itself */
		return 0;
	}
	if (code_type_basicsize(word_at(iframe_of(frame), L.code_off), &base) != 0 ||
	    !stack_lines_agree(frame, base, 2))
		return -1;
	L.code_base = base;
	return 0;
}

/*
 * 3.10's f_lasti: an int of the frame object that gives every frame's line
 * as the API does.  Offset 96 (its place in CPython 3.10's PyFrameObject on
 * 64-bit machines) is tried first, then the other ints after f_code, which
 * must agree on a deeper stack (a small f_stackdepth can point at a short
 * function's first line by chance).  All lie inside the object: a 3.10
 * frame object is over 300 bytes (its block stack alone is 240).
 */
static int discover_lasti(PyObject *frame)
{
	L.ip_off = 96;
	if (stack_lines_agree(frame, 0, 2))
		return 0;
	for (L.ip_off = L.code_off + 8; L.ip_off < 160; L.ip_off += 4)
		if (L.ip_off != 96 && stack_lines_agree(frame, 0, 4))
			return 0;
	L.ip_off = 0;
	return -1;
}

/* The instruction pointer (3.11+): the word of the interpreter frame that points inside the code object. */
static int discover_ip(PyObject *frame, void *iframe, PyObject *code)
{
	if (L.frame_objects)
		return discover_lasti(frame);
	L.ip_off = 0;
	for (size_t i = 0; i < 10; i++) {
		uintptr_t w = (uintptr_t)word_at(iframe, i * 8);

		if (w > (uintptr_t)code && w < (uintptr_t)code + 65536 && i * 8 != L.code_off) {
			L.ip_off = i * 8;
			return 0;
		}
	}
	return -1;
}

/* The code object's and its strings' layout, then the first instruction's offset. */
static void discover_code(PyObject *frame, PyObject *code)
{
	PyObject *filename = py.Object_GetAttrString(code, "co_filename");
	PyObject *name = py.Object_GetAttrString(code, "co_name");

	if (!filename || !name || find_word(code, 40, filename, &L.filename_off) != 0 ||
	    find_word(code, 40, name, &L.name_off) != 0 || discover_string_layout(filename) != 0 ||
	    discover_code_base(frame) != 0)
		py.Err_Clear();
	else
		L.ok = 1;
	if (filename)
		py.DecRef(filename);
	if (name)
		py.DecRef(name);
}

/*
 * sys.argv[0] and sys.path, for pyowner.c to find the library roots from,
 * once: with the GIL held, before any frame is classified (classification
 * needs the layout, L.ok, set after this).  Borrowed strings, copied there.
 */
static void owner_from_python(void)
{
	static int done;
	PyObject *(*sys_get)(const char *) = (PyObject * (*)(const char *)) dlsym(RTLD_DEFAULT, "PySys_GetObject");
	long (*list_size)(PyObject *) = (long (*)(PyObject *))dlsym(RTLD_DEFAULT, "PyList_Size");
	PyObject *(*list_item)(PyObject *, long) = (PyObject * (*)(PyObject *, long)) dlsym(RTLD_DEFAULT, "PyList_GetItem");
	const char *paths[64], *script = NULL;
	PyObject *path, *argv, *o;
	long n;
	int npaths = 0;

	if (done)
		return;
	done = 1;
	if (sys_get && list_size && list_item) {
		argv = sys_get("argv");
		if (argv && list_size(argv) > 0 && (o = list_item(argv, 0)))
			script = py.Unicode_AsUTF8(o);
		path = sys_get("path");
		n = path ? list_size(path) : 0;
		for (long i = 0; i < n && npaths < 64; i++)
			if ((o = list_item(path, i)) && (paths[npaths] = py.Unicode_AsUTF8(o)))
				npaths++;
		py.Err_Clear();
	}
	agp_py_owner_init(script, paths, npaths);
}

void agp_py_discover_layout(void)
{
	PyObject *frame, *back, *code;
	void *iframe, *back_iframe, *ts;
	const char *ver;

	if (agp_py_layout_tried() || !agp_py_available())
		return;
	owner_from_python();
	L.tries++;
	ver = py.GetVersion();
	/* 3.9 and older: not supported by TensorFlow 2.21, no call sites. */
	if (!ver || ver[0] != '3' || ver[1] != '.' || atoi(ver + 2) < 10) {
		L.tries = LAYOUT_TRIES;
		return;
	}
	L.frame_objects = atoi(ver + 2) == 10;
	frame = py.Eval_GetFrame();
	ts = py.GILState_GetThisThreadState();
	if (!frame || !ts)
		return;
	back = py.Frame_GetBack(frame);
	if (!back)
		return;
	iframe = iframe_of(frame);
	back_iframe = iframe_of(back);
	code = py.Frame_GetCode(frame);
	if (discover_thread_state(ts, iframe) == 0 && find_word(iframe, 10, code, &L.code_off) == 0 &&
	    find_word(iframe, 10, back_iframe, &L.prev_off) == 0 && discover_ip(frame, iframe, code) == 0)
		discover_code(frame, code);
	py.DecRef(code);
	py.DecRef(back);
}

const char *agp_py_tuple_str(PyObject *tuple, long i)
{
	PyObject *o;
	const char *s;

	if (!agp_py_available() || !(o = py.Tuple_GetItem(tuple, i))) {
		if (py.resolved > 0)
			py.Err_Clear();
		return NULL;
	}
	s = py.Unicode_AsUTF8(o);
	if (!s)
		py.Err_Clear();
	return s;
}

int agp_py_gil_held(void)
{
	return agp_py_available() && py.GILState_Check();
}

/*
 * Whether discovery is over: found, or given up.  A stack it cannot confirm
 * (a single frame, a line the API and memory disagree on) is tried again at
 * the next calls made with the GIL held, a few times: one unlucky first
 * call must not leave the whole run without call sites.
 */
int agp_py_layout_tried(void)
{
	return L.ok || L.tries >= LAYOUT_TRIES;
}

/* Copy a str object's text if it is compact ASCII; returns its length or -1. */
static long read_ascii(PyObject *str, const char **text)
{
	uint32_t state = *(const uint32_t *)((const char *)str + 32);
	long len = *(const long *)((const char *)str + 16);

	/* state bits: interned:2 kind:3 compact:1 ascii:1 */
	if (!((state >> 5) & 1) || !((state >> 6) & 1) || len < 0 || len > 4096)
		return -1;
	*text = (const char *)str + L.str_data_off;
	return len;
}


static struct agp_codecache_slot *code_lookup(struct agp_thread *t, uintptr_t code)
{
	uintptr_t filename = (uintptr_t)word_at((void *)code, L.filename_off);
	size_t i = (code >> 4) & (AGP_CODECACHE - 1);
	struct agp_codecache_slot *slot = &t->codecache[i];
	const char *file_text, *name_text;
	long flen, nlen;

	if (slot->code == code && slot->filename == filename)
		return slot;
	flen = read_ascii((PyObject *)filename, &file_text);
	nlen = read_ascii((PyObject *)word_at((void *)code, L.name_off), &name_text);
	if (flen < 0) {
		file_text = "<non-ascii path>";
		flen = (long)strlen(file_text);
	}
	if (nlen < 0) {
		name_text = "?";
		nlen = 1;
	}
	slot->code = code;
	slot->filename = filename;
	slot->kind = (uint32_t)agp_classify_path(file_text, (size_t)flen);
	slot->file = slot->kind == AGP_FRAME_FRAMEWORK ? 0 : agp_intern(t, file_text, (size_t)flen);
	slot->func = slot->kind == AGP_FRAME_FRAMEWORK ? 0 : agp_intern(t, name_text, (size_t)nlen);
	return slot;
}

/* One frame of a call-site chain, copied out of the code cache while walking. */
struct chain_frame {
	uintptr_t code, ip;
	uint32_t file, func;
};

static uint32_t frame_line(const struct chain_frame *f)
{
	int line = py.Code_Addr2Line((PyObject *)f->code, (int)((long)(f->ip - f->code) - (long)L.code_base));

	return line > 0 ? (uint32_t)line : 0;
}

/*
 * Define the chain as linked sites, outermost first so that each knows its
 * parent: the user frame (when there is one), then the library frames out
 * to in.  Returns the innermost site.  A cache miss only.
 */
static uint32_t define_chain(struct agp_thread *t, const struct chain_frame *lib, int nlib,
			     const struct chain_frame *user)
{
	uint32_t parent = 0;

	if (user)
		parent = agp_site_define(t, user->file, user->func, frame_line(user), 0, 0);
	for (int i = nlib - 1; i >= 0; i--)
		parent = agp_site_define(t, lib[i].file, lib[i].func, frame_line(&lib[i]), parent, AGP_SITE_LIBRARY);
	return parent;
}

static char *current_iframe(void)
{
	char *ts = py.GILState_GetThisThreadState(), *iframe;

	if (!ts)
		return NULL;
	iframe = word_at(ts, L.ts_off);
	if (L.ts_indirect && iframe)
		iframe = word_at(iframe, L.cf_off);
	return iframe;
}

/* The walk memo's hash, one frame further out. */
static uint64_t path_step(uint64_t h, uintptr_t code, uintptr_t ip)
{
	h = (h ^ code) * 0x9E3779B97F4A7C15ull;
	return (h ^ ip ^ (h >> 29)) * 0xC2B2AE3D27D4EB4Full;
}

static struct agp_walkmemo_slot *walkmemo_set(struct agp_thread *t, uintptr_t code, uintptr_t ip)
{
	size_t h = (code >> 4) ^ (ip * 0x9E3779B97F4A7C15ull >> 24);

	return &t->walkmemo[(h * 2) & (AGP_WALKMEMO - 2)];
}

/*
 * The site of a walk met before: the memo slots of the innermost frame's
 * set whose frames, out to their depth, hash as the stack's do now.  0 on
 * a miss (a site id is never 0).  Reads the frames' own words only.
 */
static uint32_t walkmemo_find(struct agp_thread *t, char *iframe)
{
	uintptr_t code = (uintptr_t)word_at(iframe, L.code_off), ip = frame_ip(iframe, code);
	struct agp_walkmemo_slot *set = walkmemo_set(t, code, ip);
	int want0 = set[0].code == code && set[0].ip == ip && set[0].site;
	int want1 = set[1].code == code && set[1].ip == ip && set[1].site;
	uint32_t last = want0 && want1 ? (set[0].depth > set[1].depth ? set[0].depth : set[1].depth)
			: want0 ? set[0].depth : set[1].depth;
	uint64_t h = 0;

	if (!want0 && !want1)
		return 0;
	for (uint32_t depth = 0; iframe && depth <= last; depth++) {
		uintptr_t c = (uintptr_t)word_at(iframe, L.code_off);

		h = path_step(h, c, frame_ip(iframe, c));
		if (want0 && depth == set[0].depth && h == set[0].path)
			return set[0].site;
		if (want1 && depth == set[1].depth && h == set[1].path)
			return set[1].site;
		iframe = word_at(iframe, L.prev_off);
	}
	return 0;
}

/* Remember a walk's site (the set's older slot goes: slot 1 moves to 0). */
static void walkmemo_add(struct agp_thread *t, uintptr_t code, uintptr_t ip, uint64_t path, uint32_t depth,
			 uint32_t site)
{
	struct agp_walkmemo_slot *set = walkmemo_set(t, code, ip);

	set[0] = set[1];
	set[1] = (struct agp_walkmemo_slot){ code, ip, path, depth, site };
}

/*
 * Walk out from the innermost frame, skipping TensorFlow's own, to the first
 * user frame, keeping up to AGP_SITE_CHAIN_MAX - 1 library frames met on the
 * way (the innermost ones).  The site cache is keyed on the innermost frame
 * and the user frame, so a hit costs the walk only; a walk met before (the
 * memo) does not even classify the frames.
 */
uint32_t agp_py_callsite(struct agp_thread *t)
{
	struct chain_frame lib[AGP_SITE_CHAIN_MAX - 1], user = { 0, 0, 0, 0 };
	const struct chain_frame *inner;
	struct agp_sitecache_slot *ss;
	char *iframe, *innermost;
	int nlib = 0, seen = 0, depth;
	uint64_t path = 0;
	uint32_t site;
	size_t h;

	if (!L.ok || !(innermost = iframe = current_iframe()))
		return 0;
	if ((site = walkmemo_find(t, iframe)))
		return site;
	for (depth = 0; iframe && depth < 64 && !user.code; depth++) {
		uintptr_t code = (uintptr_t)word_at(iframe, L.code_off), ip = frame_ip(iframe, code);

		path = path_step(path, code, ip);
		if (code && word_at((void *)code, 8) == py.Code_Type) {
			const struct agp_codecache_slot *cs = code_lookup(t, code);
			struct chain_frame f = { code, ip, cs->file, cs->func };

			if (cs->kind == AGP_FRAME_USER)
				user = f;
			else if (cs->kind == AGP_FRAME_LIBRARY && seen++ < AGP_SITE_CHAIN_MAX - 1)
				lib[nlib++] = f;
		}
		iframe = word_at(iframe, L.prev_off);
	}
	if (!nlib && !user.code)
		return 0;
	inner = nlib ? &lib[0] : &user;
	h = (inner->code >> 4) ^ (inner->ip * 0x9E3779B97F4A7C15ull >> 20);
	if (nlib)
		h ^= (user.code >> 6) ^ (user.ip * 0xC2B2AE3D27D4EB4Full >> 24);
	ss = &t->sitecache[h & (AGP_SITECACHE - 1)];
	if (!(ss->code == inner->code && ss->ip == inner->ip && ss->user_code == (nlib ? user.code : 0) &&
	      ss->user_ip == (nlib ? user.ip : 0))) {
		ss->code = inner->code;
		ss->ip = inner->ip;
		ss->user_code = nlib ? user.code : 0;
		ss->user_ip = nlib ? user.ip : 0;
		ss->site = define_chain(t, lib, nlib, user.code ? &user : NULL);
	}
	/* Only walks that end at a user frame: the others went to the bottom of the stack. */
	if (user.code && ss->site && depth <= AGP_WALKMEMO_DEPTH) {
		uintptr_t code = (uintptr_t)word_at(innermost, L.code_off);

		walkmemo_add(t, code, frame_ip(innermost, code), path, (uint32_t)(depth - 1), ss->site);
	}
	return ss->site;
}

/*
 * Node lines read as a trace's ops are made (pytrace.c agp_pytrace_op), not
 * from their StackTraces afterwards: TensorFlow turns each op's whole stack
 * into frames the first time it is read, 20 to 40 us an op (Keras fit's
 * graphs: 10,154 ops, 0.47 s of 9.5 s).  The same answer as pytrace.py
 * _innermost_user_line() or none.  A frame in AutoGraph's generated code
 * (every user tf.function's, converted by default) stands for the user's
 * line only through the conversion's source map, which pytrace.py holds:
 * the frames are then written as they are, for it to map (_made_lines); a
 * file that is not plain ASCII leaves the op to its StackTrace.
 */
enum op_file { OPF_USER, OPF_SKIP, OPF_GENERATED, OPF_UNKNOWN };

/* pytrace.py _is_framework() and its generated-code test, on a frame's file. */
static enum op_file op_file_kind(const char *s, long n)
{
	if (n < 0 || memchr(s, '\t', (size_t)n) || memchr(s, '\n', (size_t)n))
		return OPF_UNKNOWN;
	if ((n >= 7 && !memcmp(s, "<frozen", 7)) || agp_path_contains(s, (size_t)n, "/tensorflow/") ||
	    agp_path_contains(s, (size_t)n, "/keras/") || agp_path_contains(s, (size_t)n, "/tf_keras/") ||
	    agp_path_contains(s, (size_t)n, "/absl/"))
		return OPF_SKIP;
	return agp_path_contains(s, (size_t)n, "__autograph_generated_file") ? OPF_GENERATED : OPF_USER;
}

/* A Keras op's stack is some 60 frames of as many code objects: 1024 slots, per thread (no GIL here). */
enum { OPF_CACHE = 1024 };
struct agp_opfile_slot {
	uintptr_t code, filename;
	int kind;
};

static enum op_file op_code_kind(struct agp_opfile_slot *cache, uintptr_t code, const char **file, long *flen)
{
	uintptr_t filename = (uintptr_t)word_at((void *)code, L.filename_off);
	struct agp_opfile_slot *slot = &cache[(code >> 4) & (OPF_CACHE - 1)];

	*flen = read_ascii((PyObject *)filename, file);
	if (slot->code != code || slot->filename != filename) {
		slot->code = code;
		slot->filename = filename;
		slot->kind = op_file_kind(*file, *flen);
	}
	return (enum op_file)slot->kind;
}

/* The frames an op's line is decided on: the first two that are not skipped, more past generated ones. */
enum { OP_FRAMES = 8 };
struct op_frame {
	const char *file, *name;
	long flen, nlen;
	int line, generated;
};

/*
 * "file\tline\tfunction\tloop line" from the innermost frames f[0..n), none
 * of them generated: the innermost user frame, and the line of the next
 * one out when that is the same function at another line (0 otherwise).
 */
static int op_line_text(const struct op_frame *f, int n, char *buf, size_t cap)
{
	int outer = n > 1 && f[1].flen == f[0].flen && !memcmp(f[1].file, f[0].file, (size_t)f[0].flen) &&
		    f[1].nlen == f[0].nlen && !memcmp(f[1].name, f[0].name, (size_t)f[0].nlen) &&
		    f[1].line != f[0].line ? f[1].line : 0;
	int len = snprintf(buf, cap, "%.*s\t%d\t%.*s\t%d", (int)f[0].flen, f[0].file, f[0].line, (int)f[0].nlen,
			   f[0].name, outer);

	return len > 0 && (size_t)len < cap ? len : -1;
}

/*
 * "\x01\tmore\tfile\tline\tfunction..." of frames f[0..n), generated ones
 * among them, for pytrace.py to map (more: 1 when frames past them were
 * not written).
 */
static int op_chain_text(const struct op_frame *f, int n, int more, char *buf, size_t cap)
{
	int len = snprintf(buf, cap, "\x01\t%d", more);

	for (int i = 0; i < n && len > 0 && (size_t)len < cap; i++)
		len += snprintf(buf + len, cap - (size_t)len, "\t%.*s\t%d\t%.*s", (int)f[i].flen, f[i].file, f[i].line,
				(int)f[i].nlen, f[i].name);
	return len > 0 && (size_t)len < cap ? len : -1;
}

/*
 * The op being made on this thread: its line as op_line_text() writes it,
 * or the frames for pytrace.py (op_chain_text()) when generated code is
 * among them.  Returns the length written, 0 when no frame is the user's,
 * -1 when pytrace.py must read the op's StackTrace.  The GIL is not held
 * (TF_NewOperation): the thread's own frames, read as agp_py_callsite()
 * reads them.  CPython 3.10 and 3.11 only: 3.12's interpreter frames
 * include its trampoline's ("<shim>"), which StackTraces leave out
 * (tests/integration/test_node_lines.py).
 */
int agp_py_op_line(struct agp_thread *t, char *buf, size_t cap)
{
	static int known;  /* 0 untold, 1 3.10 or 3.11, -1 another (set alike by any thread) */
	struct op_frame f[OP_FRAMES];
	int n = 0, generated = 0, more = 0;
	char *iframe;

	if (!known) {
		const char *v = agp_py_version();

		known = v && (!strncmp(v, "3.10.", 5) || !strncmp(v, "3.11.", 5)) ? 1 : -1;
	}
	if (known < 0 || !L.ok || !(iframe = current_iframe()))
		return -1;
	if (!t->op_files && !(t->op_files = calloc(OPF_CACHE, sizeof(*t->op_files))))
		return -1;
	for (int depth = 0; iframe; depth++, iframe = word_at(iframe, L.prev_off)) {
		uintptr_t code = (uintptr_t)word_at(iframe, L.code_off);
		struct op_frame *fr;
		enum op_file kind;
		const char *file = NULL;
		long flen = -1;

		t->py_counts.op_frames++;
		if (depth >= 1024 || !code || word_at((void *)code, 8) != py.Code_Type)
			return -1;
		if ((kind = op_code_kind(t->op_files, code, &file, &flen)) == OPF_SKIP)
			continue;
		if (n == (generated ? OP_FRAMES : 2)) {
			more = 1;
			break;
		}
		fr = &f[n];
		fr->file = file;
		fr->flen = flen;
		fr->nlen = read_ascii((PyObject *)word_at((void *)code, L.name_off), &fr->name);
		if (kind == OPF_UNKNOWN || fr->nlen < 0 || memchr(fr->name, '\t', (size_t)fr->nlen) ||
		    memchr(fr->name, '\n', (size_t)fr->nlen))
			return -1;
		fr->line = (int)frame_line(&(struct chain_frame){ code, frame_ip(iframe, code), 0, 0 });
		fr->generated = kind == OPF_GENERATED;
		generated |= fr->generated;
		n++;
	}
	if (!n)
		return 0;
	return generated ? op_chain_text(f, n, more, buf, cap) : op_line_text(f, n, buf, cap);
}
