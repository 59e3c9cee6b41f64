/*
 * hooks_tf.c - interposition on TensorFlow's C API (see docs/collector.md).
 *
 * Python extension modules are loaded with RTLD_LOCAL, but a preloaded
 * library comes first in every object's lookup scope, so calls that cross
 * shared-object boundaries (the pybind modules calling libtensorflow_cc's C
 * API through their PLT) reach these definitions.  The real functions are
 * found in the loaded object that defines them (they are not in the global
 * scope, so RTLD_NEXT cannot see them).  The symbols carry TensorFlow's
 * version node "tensorflow" through collector/collector.map.
 */
#include "collector.h"
#include "gpu_record.h"

#include <dlfcn.h>
#include <link.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

typedef struct TFE_Op TFE_Op;
typedef struct TFE_TensorHandle TFE_TensorHandle;
typedef struct TFE_Context TFE_Context;
typedef struct TF_Status TF_Status;
typedef struct TF_Graph TF_Graph;
typedef struct TF_Function TF_Function;
typedef struct TF_Operation TF_Operation;
typedef struct TF_OperationDescription TF_OperationDescription;
typedef struct TF_FunctionOptions TF_FunctionOptions;
typedef struct { TF_Operation *oper; int index; } TF_Output;
typedef struct { const void *data; size_t length; void (*dealloc)(void *, size_t); } TF_Buffer;
typedef struct _object PyObject;

static int tf_seen;

struct find_ctx {
	const char *sym;
	void *self;
	void *found;
};

/*
 * Whether p lies in one of the object's loaded segments.  Not dladdr: it
 * looks for the nearest symbol too, a walk over all 446,000 of
 * libtensorflow_cc.so.2's, at each of the hooks' first calls.
 */
static int in_object(const struct dl_phdr_info *info, const void *p)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = (uintptr_t)info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (uintptr_t)p >= start && (uintptr_t)p - start < ph->p_memsz)
			return 1;
	}
	return 0;
}

static int find_in_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find_ctx *ctx = data;
	void *h, *p;

	(void)size;
	if (!info->dlpi_name || !info->dlpi_name[0] || ctx->found)
		return ctx->found != NULL;
	h = agp_real_dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return 0;
	p = dlsym(h, ctx->sym);
	dlclose(h);
	/* dlsym on a handle also searches the global scope: skip our own copy. */
	if (p && p != ctx->self && in_object(info, p))
		ctx->found = p;
	return ctx->found != NULL;
}

/* The definition of sym in whichever loaded object provides it, except ours (collector.h). */
void *agp_tf_symbol(const char *sym, void *self)
{
	struct find_ctx ctx = { sym, self, NULL };

	dl_iterate_phdr(find_in_object, &ctx);
	return ctx.found;
}

#define REAL(ret, name, ...) \
	static ret (*real_##name)(__VA_ARGS__); \
	if (__builtin_expect(!real_##name, 0)) \
		real_##name = (ret (*)(__VA_ARGS__))agp_tf_symbol(#name, (void *)name)

/* API we call ourselves (resolved once, from libtensorflow). */
static struct {
	const char *(*OpGetName)(const TFE_Op *, TF_Status *);
	const char *(*OpGetDevice)(const TFE_Op *, TF_Status *);
	int (*GetCode)(const TF_Status *);
	TF_Status *(*NewStatus)(void);
	void (*DeleteStatus)(TF_Status *);
	const char *(*FunctionName)(TF_Function *);
	void (*FunctionToFunctionDef)(TF_Function *, TF_Buffer *, TF_Status *);
	TF_Buffer *(*NewBuffer)(void);
	void (*DeleteBuffer)(TF_Buffer *);
	const char *(*Version)(void);
	int (*OpGetFlatInputCount)(TFE_Op *, TF_Status *);
	TFE_TensorHandle *(*OpGetFlatInput)(TFE_Op *, int, TF_Status *);
	int (*TensorHandleDataType)(TFE_TensorHandle *);  /* TF_DataType */
	int ready;
} tf;

static void tf_status_record(void);

static int tf_api_ready(void)
{
	if (__builtin_expect(tf.ready, 1))
		return tf.ready > 0;
	tf.OpGetName = agp_tf_symbol("TFE_OpGetName", NULL);
	tf.OpGetDevice = agp_tf_symbol("TFE_OpGetDevice", NULL);
	tf.GetCode = agp_tf_symbol("TF_GetCode", NULL);
	tf.NewStatus = agp_tf_symbol("TF_NewStatus", NULL);
	tf.DeleteStatus = agp_tf_symbol("TF_DeleteStatus", NULL);
	tf.FunctionName = agp_tf_symbol("TF_FunctionName", NULL);
	tf.FunctionToFunctionDef = agp_tf_symbol("TF_FunctionToFunctionDef", NULL);
	tf.NewBuffer = agp_tf_symbol("TF_NewBuffer", NULL);
	tf.DeleteBuffer = agp_tf_symbol("TF_DeleteBuffer", NULL);
	tf.Version = agp_tf_symbol("TF_Version", NULL);
	/* optional: without them tf.data's pipelines are told apart by time only */
	tf.OpGetFlatInputCount = agp_tf_symbol("TFE_OpGetFlatInputCount", NULL);
	tf.OpGetFlatInput = agp_tf_symbol("TFE_OpGetFlatInput", NULL);
	tf.TensorHandleDataType = agp_tf_symbol("TFE_TensorHandleDataType", NULL);
	tf.ready = (tf.OpGetName && tf.OpGetDevice && tf.GetCode && tf.NewStatus && tf.DeleteStatus &&
		    tf.FunctionName && tf.FunctionToFunctionDef && tf.NewBuffer && tf.DeleteBuffer) ? 1 : -1;
	tf_status_record();
	return tf.ready > 0;
}

static void tf_status_record(void)
{
	struct agp_side s;

	if (tf_seen)
		return;
	tf_seen = 1;
	agp_side_begin(&s, AGP_SIDE_TF_STATUS);
	if (tf.ready > 0) {
		agp_side_text(&s, AGP_F_STATUS, "hooked");
	} else {
		agp_side_text(&s, AGP_F_STATUS, "mismatch");
		agp_side_text(&s, AGP_F_DETAIL, "TensorFlow's C API helpers (TFE_OpGetName, TF_FunctionToFunctionDef, ...) were not found");
	}
	if (tf.Version)
		agp_side_text(&s, AGP_F_TFVER, tf.Version());
	agp_side_text(&s, AGP_F_PYVER, agp_py_version());
	agp_side_end(&s);
}

/*
 * Registered function names, so that TFE_Execute can tell a graph-function
 * call from a primitive op.  Insert-only open addressing with atomic slots:
 * readers take no lock.
 */
#define FN_SET_SIZE 16384
static _Atomic(char *) fn_set[FN_SET_SIZE];

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

static void fn_set_add(const char *name)
{
	uint64_t h = name_hash(name);
	char *copy = NULL;

	for (size_t i = 0; i < FN_SET_SIZE; i++) {
		_Atomic(char *) *slot = &fn_set[(h + i) & (FN_SET_SIZE - 1)];
		char *cur = atomic_load(slot);

		if (cur && !strcmp(cur, name))
			break;
		if (!cur) {
			if (!copy && !(copy = strdup(name)))
				return;
			if (atomic_compare_exchange_strong(slot, &cur, copy))
				return;
			if (cur && !strcmp(cur, name))
				break;
		}
	}
	free(copy);
}

static int fn_set_has(const char *name)
{
	uint64_t h = name_hash(name);

	for (size_t i = 0; i < FN_SET_SIZE; i++) {
		char *cur = atomic_load_explicit(&fn_set[(h + i) & (FN_SET_SIZE - 1)], memory_order_acquire);

		if (!cur)
			return 0;
		if (!strcmp(cur, name))
			return 1;
	}
	return 0;
}

static struct agp_open_trace *innermost_trace(struct agp_thread *t)
{
	return t->trace_top;
}

/* Eager ops and graph-function calls */

/* strcmp(a, b) == 0 inline: op names are a few bytes, a libc call per op cost more (docs/collector.md, "Cost per op"). */
static inline int same_name(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

/*
 * What the kernels that run during this TFE_Execute belong to (see
 * hooks_kernel.c): a call's seq for this thread and, while it is the only
 * call in flight, for the executor's threads; a primitive op's kernel
 * belongs to no call.  Per call, not per kernel: two atomics are cheap.
 * The seq carries the call's sampling decision (AGP_CALL_DETAIL).
 */
static void kernels_enter(struct agp_thread *t, int is_call, uint64_t seq)
{
	if (!is_call) {
		t->eager_depth++;
		return;
	}
	t->call_seq = seq;
	atomic_store_explicit(&agp_proc.last_call_seq, seq, memory_order_relaxed);
	atomic_fetch_add_explicit(&agp_proc.active_calls, 1, memory_order_release);
}

static void kernels_leave(struct agp_thread *t, int is_call, uint64_t outer_call)
{
	if (!is_call) {
		t->eager_depth--;
		return;
	}
	atomic_fetch_sub_explicit(&agp_proc.active_calls, 1, memory_order_release);
	t->call_seq = outer_call;
}

/* tf.data */

enum { TF_RESOURCE_DTYPE = 20, TF_VARIANT_DTYPE = 21 };  /* tensorflow/c/tf_datatype.h */

/*
 * The first two inputs of a dataset or iterator op, read before it runs
 * (TFE_Execute may consume them), when they are handles: a dataset (a
 * variant) or an iterator (a resource).  A source's inputs are tensors
 * (from_tensor_slices' arrays, range's bounds), whose addresses may be a
 * freed dataset's: taken for one, they chained Keras fit's from_tensors
 * in front of the user's next pipeline.
 */
static void dataset_inputs(TFE_Op *op, TF_Status *status, const void *in[2])
{
	int n;

	in[0] = in[1] = NULL;
	if (!tf.OpGetFlatInputCount || !tf.OpGetFlatInput)
		return;
	n = tf.OpGetFlatInputCount(op, status);
	for (int i = 0; i < n && i < 2 && tf.GetCode(status) == 0; i++) {
		TFE_TensorHandle *h = tf.OpGetFlatInput(op, i, status);
		int dtype = h && tf.TensorHandleDataType ? tf.TensorHandleDataType(h) : TF_VARIANT_DTYPE;

		in[i] = dtype == TF_VARIANT_DTYPE || dtype == TF_RESOURCE_DTYPE ? h : NULL;
	}
}

/*
 * One AGP_SIDE_DATASET record: a dataset or iterator made (rare: once per
 * transformation the program builds), or a read of an iterator other than
 * the one this thread read last (once per loop, not per element).
 */
static void dataset_record(struct agp_thread *t, const char *name, int op_flags, const void *in[2],
			   TFE_TensorHandle **retvals, const int *num_retvals, uint64_t start, uint64_t end)
{
	struct agp_side s;

	if (op_flags & AGP_OP_READ) {
		if (in[0] == t->last_iterator)
			return;
		t->last_iterator = in[0];
	} else {
		t->last_iterator = NULL;  /* a new iterator may take a freed one's address */
	}
	agp_side_begin(&s, AGP_SIDE_DATASET);
	agp_side_text(&s, AGP_F_NAME, name);
	agp_side_int(&s, AGP_F_TID, t->tid);
	agp_side_int(&s, AGP_F_START, (int64_t)start);
	agp_side_int(&s, AGP_F_END, (int64_t)end);
	agp_side_int(&s, AGP_F_DS_IN, (int64_t)(uintptr_t)in[0]);
	agp_side_int(&s, AGP_F_DS_IN2, (int64_t)(uintptr_t)in[1]);
	if (!(op_flags & AGP_OP_READ) && num_retvals && *num_retvals > 0 && retvals)
		agp_side_int(&s, AGP_F_DS_OUT, (int64_t)(uintptr_t)retvals[0]);
	agp_side_end(&s);
}

AGP_EXPORT void TFE_Execute(TFE_Op *op, TFE_TensorHandle **retvals, int *num_retvals, TF_Status *status)
{
	const void *ds_in[2] = { NULL, NULL };
	struct agp_thread *t;
	const char *name, *device;
	uint32_t name_id, device_id = 0, site, flags, gap = 0;
	uint64_t start, end, seq, outer_call, capture_call = 0, detail;
	int is_call, op_flags, coll_kind = 0, gpu_on;
	struct agp_collective_keys coll;

	REAL(void, TFE_Execute, TFE_Op *, TFE_TensorHandle **, int *, TF_Status *);
	t = agp_thread_get();
	if (!t || t->in_hook || !tf_api_ready()) {
		real_TFE_Execute(op, retvals, num_retvals, status);
		return;
	}
	t->in_hook = 1;
	name = tf.OpGetName(op, status);
	if (!name)
		name = "?";
	device = tf.OpGetDevice(op, status);
	name_id = agp_intern_op(t, name, fn_set_has, &op_flags);
	is_call = op_flags & AGP_OP_FUNCTION;
	if (device && device[0])
		device_id = agp_intern(t, device, strlen(device));
	site = agp_py_callsite(t);
	/* Fast path: the op TFE_Py_FastPathExecute_C was asked for, not the
	 * _EagerConst conversions it runs through TFE_Execute on the way. */
	flags = t->fastpath_depth && t->fastpath_op && same_name(name, t->fastpath_op) ? 0 : AGP_SPAN_SLOW_PATH;
	if (!is_call && innermost_trace(t) && !strcmp(name, "VarHandleOp"))
		agp_pytrace_count_variable(innermost_trace(t));
	seq = atomic_fetch_add_explicit(&agp_proc.next_seq, 1, memory_order_relaxed);
	if (op_flags & AGP_OP_CAPTURE)
		capture_call = agp_capture_call_begin();  /* may open the window: before the call starts */
	if (__builtin_expect(op_flags & AGP_OP_COLLECTIVE, 0) && (coll_kind = agp_collective_kind(name, strlen(name))))
		agp_collective_eager_keys(op, coll_kind, &coll);  /* its inputs are read before it runs */
	if (__builtin_expect(op_flags & AGP_OP_DATASET, 0))
		dataset_inputs(op, status, ds_in);
	t->in_hook = 0;
	outer_call = t->call_seq;
	start = agp_now_ns();  /* before the sampling decision: the test's oracle reads the recorded start */
	detail = is_call ? agp_call_detailed(t, name_id, start) : 0;
	kernels_enter(t, is_call, seq | detail);
	gpu_on = gpu_dispatch_enter(seq);
	real_TFE_Execute(op, retvals, num_retvals, status);
	end = agp_now_ns();
	gpu_dispatch_leave(gpu_on);
	kernels_leave(t, is_call, outer_call);
	if (detail)
		agp_call_sampled(t, name_id, start, end);
	if (tf.GetCode(status) != 0)
		flags |= AGP_SPAN_FAILED;
	/*
	 * The Python between two dispatches of an eager loop (op wrappers,
	 * conversions, the loop itself) is part of what eager execution costs:
	 * TFE_Execute's own span misses it.
	 */
	if (!is_call && t->last_dispatch_end && start > t->last_dispatch_end &&
	    start - t->last_dispatch_end < AGP_PYTHON_GAP_MAX_NS)
		gap = (uint32_t)(start - t->last_dispatch_end);
	t->last_dispatch_end = end;
	agp_emit_span(t, is_call ? AGP_REC_CALL : AGP_REC_EAGER, name_id, start, end,
		      device_id, site, is_call ? (flags & AGP_SPAN_FAILED) | (detail ? AGP_SPAN_KERNEL_DETAIL : 0) : flags, gap,
		      seq);
	if (coll_kind)
		agp_collective_eager_done(t, &coll, start, end);
	if (__builtin_expect(op_flags & AGP_OP_DATASET, 0) && !(flags & AGP_SPAN_FAILED))
		dataset_record(t, name, op_flags, ds_in, retvals, num_retvals, start, end);
	if (capture_call)
		agp_capture_call_end(capture_call);  /* may close it: once the call is recorded */
}

/* The C fast path of generated op wrappers; TFE_Execute inside it is "fast". */
#define FASTPATH_SYM _Z24TFE_Py_FastPathExecute_CP7_object
AGP_EXPORT PyObject *FASTPATH_SYM(PyObject *args);
AGP_EXPORT PyObject *FASTPATH_SYM(PyObject *args)
{
	static PyObject *(*real)(PyObject *);
	struct agp_thread *t = agp_thread_get();
	const char *outer_op;
	PyObject *ret;

	if (__builtin_expect(!real, 0))
		real = (PyObject * (*)(PyObject *)) agp_tf_symbol("_Z24TFE_Py_FastPathExecute_CP7_object", (void *)FASTPATH_SYM);
	if (!t)
		return real(args);
	if (__builtin_expect(!agp_py_layout_tried(), 0))
		agp_py_discover_layout();  /* the GIL is held here */
	/* args = (context, op_name, name, *inputs_and_attrs); nests (py_function). */
	outer_op = t->fastpath_op;
	t->fastpath_op = agp_py_tuple_str(args, 1);
	t->fastpath_depth++;
	ret = real(args);
	t->fastpath_depth--;
	t->fastpath_op = outer_op;
	return ret;
}

/*
 * The eager context is created from Python before the first op runs: learn
 * the interpreter's frame layout there, so that the very first ops (which
 * may take the GIL-free slow path) get their call sites.
 */
typedef struct TFE_ContextOptions TFE_ContextOptions;
AGP_EXPORT TFE_ContextOptions *TFE_NewContextOptions(void)
{
	REAL(TFE_ContextOptions *, TFE_NewContextOptions, void);
	if (agp_thread_get() && !agp_py_layout_tried() && agp_py_gil_held())
		agp_py_discover_layout();
	return real_TFE_NewContextOptions();
}

/* Traces: from the trace's FuncGraph creation to the function built from it. */

AGP_EXPORT TF_Graph *TF_NewGraph(void)
{
	struct agp_thread *t;
	struct agp_open_trace *ot = NULL;
	TF_Graph *g;

	REAL(TF_Graph *, TF_NewGraph, void);
	t = agp_thread_get();
	/* A TF1 program may never create the eager context: learn the frame layout here. */
	if (t && !agp_py_layout_tried() && agp_py_gil_held())
		agp_py_discover_layout();
	if (t && !t->in_hook && tf_api_ready()) {
		t->in_hook = 1;
		ot = agp_pytrace_begin(t);
		t->in_hook = 0;
	}
	g = real_TF_NewGraph();
	if (ot)
		agp_pytrace_open(t, ot, g);
	return g;
}

AGP_EXPORT void TF_DeleteGraph(TF_Graph *g)
{
	struct agp_thread *t;

	REAL(void, TF_DeleteGraph, TF_Graph *);
	t = agp_thread_get();
	if (t && t->trace_top)
		agp_pytrace_close_graph(t, g, NULL, "failed");
	real_TF_DeleteGraph(g);
}

AGP_EXPORT TF_Function *TF_GraphToFunctionWithControlOutputs(
	const TF_Graph *fn_body, const char *fn_name, unsigned char append_hash, int num_opers,
	const TF_Operation *const *opers, int ninputs, const TF_Output *inputs, int noutputs,
	const TF_Output *outputs, const char *const *output_names, int ncontrol_outputs,
	const TF_Operation *const *control_outputs, const char *const *control_output_names,
	const TF_FunctionOptions *opts, const char *description, TF_Status *status)
{
	struct agp_thread *t;
	TF_Function *fn;

	REAL(TF_Function *, TF_GraphToFunctionWithControlOutputs, const TF_Graph *, const char *,
	     unsigned char, int, const TF_Operation *const *, int, const TF_Output *, int,
	     const TF_Output *, const char *const *, int, const TF_Operation *const *,
	     const char *const *, const TF_FunctionOptions *, const char *, TF_Status *);
	fn = real_TF_GraphToFunctionWithControlOutputs(fn_body, fn_name, append_hash, num_opers, opers, ninputs,
						       inputs, noutputs, outputs, output_names, ncontrol_outputs,
						       control_outputs, control_output_names, opts, description,
						       status);
	t = agp_thread_get();
	if (t && t->trace_top && tf_api_ready())
		agp_pytrace_close_graph(t, fn_body, fn ? tf.FunctionName(fn) : fn_name, fn ? "ok" : "failed");
	return fn;
}

/* Registration: every function the eager context learns, with its FunctionDef. */

static void funcdef_record(struct agp_thread *t, const char *name, const void *def, size_t len, int loaded)
{
	struct agp_side s;
	struct agp_open_trace *ot = t ? innermost_trace(t) : NULL;

	fn_set_add(name);
	agp_side_begin(&s, AGP_SIDE_FUNCDEF);
	agp_side_text(&s, AGP_F_NAME, name);
	agp_side_int(&s, AGP_F_CREATED, (int64_t)agp_now_ns());
	agp_side_int(&s, AGP_F_TID, t ? t->tid : 0);
	agp_side_int(&s, AGP_F_PARENT_TRACE, ot ? (int64_t)agp_pytrace_seq(ot) : 0);
	agp_side_bytes(&s, AGP_F_BLOB, def, len);
	if (loaded)
		agp_side_text(&s, AGP_F_KIND, "loaded");
	agp_side_end(&s);
}

AGP_EXPORT void TFE_ContextAddFunction(TFE_Context *ctx, TF_Function *fn, TF_Status *status)
{
	struct agp_thread *t;

	REAL(void, TFE_ContextAddFunction, TFE_Context *, TF_Function *, TF_Status *);
	real_TFE_ContextAddFunction(ctx, fn, status);
	t = agp_thread_get();
	if (t && tf_api_ready() && tf.GetCode(status) == 0) {
		TF_Buffer *buf = tf.NewBuffer();
		TF_Status *st = tf.NewStatus();

		tf.FunctionToFunctionDef(fn, buf, st);
		funcdef_record(t, tf.FunctionName(fn), tf.GetCode(st) == 0 ? buf->data : NULL,
			       tf.GetCode(st) == 0 ? buf->length : 0, 0);
		tf.DeleteBuffer(buf);
		tf.DeleteStatus(st);
	}
}

/* Name of a serialized FunctionDef: field 1 (signature) -> field 1 (name). */
static int funcdef_name(const unsigned char *p, size_t len, char *out, size_t outlen);

AGP_EXPORT void TFE_ContextAddFunctionDef(TFE_Context *ctx, const char *def, size_t size, TF_Status *status)
{
	struct agp_thread *t;
	char name[512];

	REAL(void, TFE_ContextAddFunctionDef, TFE_Context *, const char *, size_t, TF_Status *);
	real_TFE_ContextAddFunctionDef(ctx, def, size, status);
	t = agp_thread_get();
	if (t && tf_api_ready() && tf.GetCode(status) == 0 &&
	    funcdef_name((const unsigned char *)def, size, name, sizeof(name)) == 0)
		funcdef_record(t, name, def, size, 1);
}

static int read_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	int shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		unsigned char b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
		shift += 7;
	}
	return -1;
}

/* Find length-delimited field `want` in a message; 0 and its bounds if found. */
static int find_bytes_field(const unsigned char *p, const unsigned char *end, uint64_t want,
			    const unsigned char **fp, size_t *flen)
{
	while (p < end) {
		uint64_t key, v;

		if (read_varint(&p, end, &key) != 0)
			return -1;
		switch (key & 7) {
		case 0: if (read_varint(&p, end, &v) != 0) return -1; break;
		case 1: p += 8; break;
		case 5: p += 4; break;
		case 2:
			if (read_varint(&p, end, &v) != 0 || v > (uint64_t)(end - p))
				return -1;
			if ((key >> 3) == want) {
				*fp = p;
				*flen = (size_t)v;
				return 0;
			}
			p += v;
			break;
		default: return -1;
		}
	}
	return -1;
}

static int funcdef_name(const unsigned char *p, size_t len, char *out, size_t outlen)
{
	const unsigned char *sig, *name;
	size_t siglen, namelen;

	if (find_bytes_field(p, p + len, 1, &sig, &siglen) != 0 ||
	    find_bytes_field(sig, sig + siglen, 1, &name, &namelen) != 0 || namelen >= outlen)
		return -1;
	memcpy(out, name, namelen);
	out[namelen] = '\0';
	return 0;
}

/* Variables created while tracing (graph-mode VarHandleOp), and each op's user line in a watched trace. */
AGP_EXPORT TF_OperationDescription *TF_NewOperation(TF_Graph *g, const char *op_type, const char *name)
{
	struct agp_thread *t;

	REAL(TF_OperationDescription *, TF_NewOperation, TF_Graph *, const char *, const char *);
	t = agp_thread_get();
	if (t && t->trace_top) {
		if (op_type && !strcmp(op_type, "VarHandleOp"))
			agp_pytrace_count_variable(innermost_trace(t));
		agp_pytrace_op(t, g, op_type, name);  /* the op's user line, for the trace's node lines */
	}
	return real_TF_NewOperation(g, op_type, name);
}

/*
 * Black boxes: tensorflow::PyFuncOp::Compute(OpKernelContext*).  Its vtable
 * slot is bound through a symbolic relocation, so the preloaded definition
 * receives every execution.  The node is named through
 * OpKernel::TraceString ("name:type"), once per kernel instance.
 */
struct cxx_string {
	char *p;
	size_t len;
	union { char buf[16]; size_t cap; } u;
};

#define PYFUNC_COMPUTE _ZN10tensorflow8PyFuncOp7ComputeEPNS_15OpKernelContextE
AGP_EXPORT void PYFUNC_COMPUTE(void *self, void *ctx);

/*
 * The kernel's registry token ("pyfunc_3"), which names its node across the
 * recording (blackbox_nodes.token).  PyFuncOp keeps it in a std::string
 * member; rather than trust a class layout, look for a short string
 * (libstdc++: pointer to its own inline buffer, then the length) holding
 * "pyfunc_<n>" in the first bytes of the object, read safely.
 */
static uint32_t kernel_token(struct agp_thread *t, const void *kernel)
{
	unsigned char buf[768];
	struct iovec local = { buf, sizeof(buf) }, remote = { (void *)kernel, sizeof(buf) };

	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)sizeof(buf))
		return 0;
	for (size_t off = 0; off + 32 <= sizeof(buf); off += 8) {
		uintptr_t p;
		size_t len;

		memcpy(&p, buf + off, 8);
		memcpy(&len, buf + off + 8, 8);
		if (p != (uintptr_t)kernel + off + 16 || len < 8 || len > 15 || memcmp(buf + off + 16, "pyfunc_", 7))
			continue;
		return agp_intern(t, (const char *)buf + off + 16, len);
	}
	return 0;
}

static void kernel_names(struct agp_thread *t, void *kernel, void *ctx, uint32_t *node, uint32_t *type,
			 uint32_t *token)
{
	static void (*trace_string)(struct cxx_string *, const void *, const void *, bool);
	static void (*cxx_delete)(void *);
	static __thread void *last_kernel;
	static __thread uint32_t last_node, last_type, last_token;
	struct cxx_string s;
	const char *colon;

	if (kernel == last_kernel && last_node) {
		*node = last_node, *type = last_type, *token = last_token;
		return;
	}
	*token = kernel_token(t, kernel);
	if (!trace_string) {
		trace_string = agp_tf_symbol("_ZNK10tensorflow8OpKernel11TraceStringB5cxx11ERKNS_15OpKernelContextEb", NULL);
		cxx_delete = dlsym(RTLD_DEFAULT, "_ZdlPv");
	}
	*node = *type = 0;
	if (!trace_string || !cxx_delete)
		return;
	trace_string(&s, kernel, ctx, false);
	colon = memchr(s.p, ':', s.len);
	if (colon) {
		*node = agp_intern(t, s.p, (size_t)(colon - s.p));
		*type = agp_intern(t, colon + 1, s.len - (size_t)(colon - s.p) - 1);
	}
	if (s.p != s.u.buf)
		cxx_delete(s.p);
	last_kernel = kernel, last_node = *node, last_type = *type, last_token = *token;
}

AGP_EXPORT void PYFUNC_COMPUTE(void *self, void *ctx)
{
	static void (*real)(void *, void *);
	struct agp_thread *t = agp_thread_get();
	uint32_t node = 0, type = 0, token = 0;
	uint64_t start;

	if (__builtin_expect(!real, 0))
		real = (void (*)(void *, void *))agp_tf_symbol("_ZN10tensorflow8PyFuncOp7ComputeEPNS_15OpKernelContextE",
							     (void *)PYFUNC_COMPUTE);
	if (!t) {
		real(self, ctx);
		return;
	}
	kernel_names(t, self, ctx, &node, &type, &token);
	start = agp_now_ns();
	real(self, ctx);
	agp_emit_span(t, AGP_REC_BLACKBOX, node, start, agp_now_ns(), type, 0, 0, token, 0);
}

/*
 * TF1 graph mode: every Session step.  Session.run and make_callable end in
 * TF_SessionRun_wrapper (lib_pywrap_tensorflow_common.so), which calls the
 * C API's TF_SessionRun@tensorflow through its PLT with the GIL released;
 * partial_run ends in TF_SessionPRun.  Session._make_callable_from_options
 * (tf.keras v1 backend functions) calls TF_SessionRunCallable, exported
 * unversioned by lib_pywrap_tensorflow_common.so and imported by
 * _pywrap_tf_session.so.  The call site is the user's session.run line,
 * read from the calling thread's frames (it is blocked in the hook).
 */
typedef struct TF_Session TF_Session;
typedef struct TF_Tensor TF_Tensor;

static void session_record(uint32_t kind, uint64_t start, uint64_t end, uint32_t site, TF_Status *status,
			   int feeds, int fetches, int targets)
{
	struct agp_thread *t = agp_thread_get();

	if (!t)
		return;
	agp_emit_session(t, kind, start, end, site, tf.GetCode(status) != 0 ? AGP_SPAN_FAILED : 0,
			 feeds > 0 ? (uint32_t)feeds : 0, fetches > 0 ? (uint32_t)fetches : 0,
			 targets > 0 ? (uint32_t)targets : 0);
}

/* The call site, unless this thread is inside one of our hooks already. */
static int session_site(uint32_t *site)
{
	struct agp_thread *t = agp_thread_get();

	if (!t || t->in_hook || !tf_api_ready())
		return -1;
	t->in_hook = 1;
	*site = agp_py_callsite(t);
	t->in_hook = 0;
	return 0;
}

AGP_EXPORT void TF_SessionRun(TF_Session *session, const TF_Buffer *run_options, const TF_Output *inputs,
			      TF_Tensor *const *input_values, int ninputs, const TF_Output *outputs,
			      TF_Tensor **output_values, int noutputs, const TF_Operation *const *target_opers,
			      int ntargets, TF_Buffer *run_metadata, TF_Status *status)
{
	uint32_t site;
	uint64_t start;

	REAL(void, TF_SessionRun, TF_Session *, const TF_Buffer *, const TF_Output *, TF_Tensor *const *, int,
	     const TF_Output *, TF_Tensor **, int, const TF_Operation *const *, int, TF_Buffer *, TF_Status *);
	if (session_site(&site)) {
		real_TF_SessionRun(session, run_options, inputs, input_values, ninputs, outputs, output_values,
				   noutputs, target_opers, ntargets, run_metadata, status);
		return;
	}
	start = agp_now_ns();
	real_TF_SessionRun(session, run_options, inputs, input_values, ninputs, outputs, output_values, noutputs,
			   target_opers, ntargets, run_metadata, status);
	session_record(AGP_SESSION_RUN, start, agp_now_ns(), site, status, ninputs, noutputs, ntargets);
}

AGP_EXPORT void TF_SessionPRun(TF_Session *session, const char *handle, const TF_Output *inputs,
			       TF_Tensor *const *input_values, int ninputs, const TF_Output *outputs,
			       TF_Tensor **output_values, int noutputs, const TF_Operation *const *target_opers,
			       int ntargets, TF_Status *status)
{
	uint32_t site;
	uint64_t start;

	REAL(void, TF_SessionPRun, TF_Session *, const char *, const TF_Output *, TF_Tensor *const *, int,
	     const TF_Output *, TF_Tensor **, int, const TF_Operation *const *, int, TF_Status *);
	if (session_site(&site)) {
		real_TF_SessionPRun(session, handle, inputs, input_values, ninputs, outputs, output_values, noutputs,
				    target_opers, ntargets, status);
		return;
	}
	start = agp_now_ns();
	real_TF_SessionPRun(session, handle, inputs, input_values, ninputs, outputs, output_values, noutputs,
			    target_opers, ntargets, status);
	session_record(AGP_SESSION_PARTIAL, start, agp_now_ns(), site, status, ninputs, noutputs, ntargets);
}

/*
 * tensorflow::TF_SessionRunCallable(TF_Session*, int64_t handle,
 * PyObject *feed_values, absl::InlinedVector<PyObject*, 8> *out_values,
 * TF_Buffer*, TF_Status*).  Feeds: ob_size of the args tuple (PyVarObject:
 * refcount, type, size).  Fetches: the InlinedVector's size, kept as
 * (size << 1 | heap-allocated) in its first word.  Targets are fixed when the
 * callable is made: not seen here (0).  Both reads are bounded.
 */
#define RUN_CALLABLE_SYM \
	_ZN10tensorflow21TF_SessionRunCallableEP10TF_SessionlP7_objectPN4absl12lts_2025081413InlinedVectorIS3_Lm8ESaIS3_EEEP9TF_BufferP10TSL_Status
AGP_EXPORT void RUN_CALLABLE_SYM(TF_Session *session, int64_t handle, PyObject *feed_values, void *out_values,
				 TF_Buffer *run_metadata, TF_Status *status);
AGP_EXPORT void RUN_CALLABLE_SYM(TF_Session *session, int64_t handle, PyObject *feed_values, void *out_values,
				 TF_Buffer *run_metadata, TF_Status *status)
{
	static void (*real)(TF_Session *, int64_t, PyObject *, void *, TF_Buffer *, TF_Status *);
	uint32_t site;
	uint64_t start, end;
	long feeds = 0, fetches = 0;

	if (__builtin_expect(!real, 0))
		real = (void (*)(TF_Session *, int64_t, PyObject *, void *, TF_Buffer *, TF_Status *))agp_tf_symbol(
			"_ZN10tensorflow21TF_SessionRunCallableEP10TF_SessionlP7_objectPN4absl12lts_2025081413"
			"InlinedVectorIS3_Lm8ESaIS3_EEEP9TF_BufferP10TSL_Status",
			(void *)RUN_CALLABLE_SYM);
	if (session_site(&site)) {
		real(session, handle, feed_values, out_values, run_metadata, status);
		return;
	}
	if (feed_values)
		feeds = *(const long *)((const char *)feed_values + 16);
	start = agp_now_ns();
	real(session, handle, feed_values, out_values, run_metadata, status);
	end = agp_now_ns();
	if (out_values)
		fetches = (long)(*(const size_t *)out_values >> 1);
	session_record(AGP_SESSION_CALLABLE, start, end, site, status, feeds >= 0 && feeds < (1L << 24) ? (int)feeds : 0,
		       fetches >= 0 && fetches < (1L << 24) ? (int)fetches : 0, 0);
}

/* Every hook, by the symbol name importing modules use (for got.c). */
const struct got_hook agp_got_hooks[] AGP_HIDDEN = {
	{ "TFE_Execute", (void *)TFE_Execute, "eager ops and graph calls" },
	{ "TFE_NewContextOptions", (void *)TFE_NewContextOptions, "call sites of the first ops" },
	{ "TF_NewGraph", (void *)TF_NewGraph, "traces" },
	{ "TF_DeleteGraph", (void *)TF_DeleteGraph, "failed traces" },
	{ "TF_NewOperation", (void *)TF_NewOperation, "variables made in traces and node lines" },
	{ "TF_GraphToFunctionWithControlOutputs", (void *)TF_GraphToFunctionWithControlOutputs, "trace ends" },
	{ "TFE_ContextAddFunction", (void *)TFE_ContextAddFunction, "registered functions" },
	{ "TFE_ContextAddFunctionDef", (void *)TFE_ContextAddFunctionDef, "registered functions" },
	{ "_Z24TFE_Py_FastPathExecute_CP7_object", (void *)FASTPATH_SYM, "fast-path ops" },
	{ "_ZN10tensorflow8PyFuncOp7ComputeEPNS_15OpKernelContextE", (void *)PYFUNC_COMPUTE, "py_function runs" },
	{ AGP_KERNEL_COMPUTE_NAME, (void *)AGP_KERNEL_COMPUTE, "kernels" },
	{ AGP_KERNEL_COMPUTE_ASYNC_NAME, (void *)AGP_KERNEL_COMPUTE_ASYNC, "kernels" },
	{ "TF_SessionRun", (void *)TF_SessionRun, "Session steps" },
	{ "TF_SessionPRun", (void *)TF_SessionPRun, "partial Session steps" },
	{ "_ZN10tensorflow21TF_SessionRunCallableEP10TF_SessionlP7_objectPN4absl12lts_2025081413InlinedVectorIS3_Lm8ESaIS3_EEEP9TF_BufferP10TSL_Status",
	  (void *)RUN_CALLABLE_SYM, "Session callables" },
	{ NULL, NULL, NULL },
};

void agp_tf_init(void)
{
	/* Hooks resolve lazily; TensorFlow objects already loaded get their GOT checked. */
	agp_got_scan();
}

static int find_tensorflow(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	return info->dlpi_name && strstr(info->dlpi_name, "libtensorflow") != NULL;
}

/*
 * A late start (agprof_attach): each session's recording says TensorFlow's
 * status again, and the objects already loaded get their GOT patched.
 */
void agp_tf_attach(void)
{
	tf_seen = 0;
	agp_got_scan();
	if (!agp_got_bound())
		return;  /* nothing reaches the hooks: the exit check says `mismatch` if TensorFlow is loaded */
	if (tf.ready)
		tf_status_record();
	else if (dl_iterate_phdr(find_tensorflow, NULL))
		tf_api_ready();
}

/*
 * A function registered in the eager context before agprof_attach (traced
 * before agprof.start()): recorded as `loaded`, so that its calls are calls
 * and its FunctionDef is known.  The caller (Python, with the GIL) passes
 * the serialized FunctionDef.
 */
AGP_EXPORT void agprof_attach_function(const char *name, const void *def, size_t len)
{
	if (agp_proc.enabled && name)
		funcdef_record(agp_thread_get(), name, def, def ? len : 0, 1);
}

/*
 * At exit: TensorFlow loaded but no hook ever ran means the hooks do not
 * match; hooks some slots of which could not be patched are a note.
 */
void agp_tf_exit_check(void)
{
	struct agp_side s;
	char unpatched[1024];

	if (agp_got_unpatched(unpatched, sizeof(unpatched))) {
		agp_side_begin(&s, AGP_SIDE_NOTE);
		agp_side_text(&s, AGP_F_DETAIL, unpatched);
		agp_side_end(&s);
	}
	if (tf_seen || !dl_iterate_phdr(find_tensorflow, NULL))
		return;
	agp_side_begin(&s, AGP_SIDE_TF_STATUS);
	/*
	 * A program may import TensorFlow and run nothing: when its objects'
	 * references reach our hooks, the hooks are in place.  TensorFlow itself
	 * is not called here: its objects may already be finalized at exit.
	 */
	if (agp_got_bound() > 0) {
		agp_side_text(&s, AGP_F_STATUS, "hooked");
		agp_side_text(&s, AGP_F_DETAIL, "TensorFlow was loaded but none of the calls agprof hooks was made");
		agp_side_end(&s);
		return;
	}
	agp_side_text(&s, AGP_F_STATUS, "mismatch");
	agp_side_text(&s, AGP_F_DETAIL,
		      "TensorFlow was loaded but none of its C API calls reached agprof's hooks (unsupported version or statically bound build)");
	agp_side_end(&s);
}
