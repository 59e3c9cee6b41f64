/*
 * hooks_collective.c - collective ops (all-reduce, all-gather, broadcast,
 * ...) with the keys that name one collective across workers, and, for the
 * asynchronous kernels of graph functions, their completion time (see
 * docs/collector.md, "Collectives").
 *
 * One AGP_SIDE_COLLECTIVE record per collective execution: op type,
 * dispatching thread, start, end, group_size, group_key, instance_key (or
 * why they were not read).  Not the hot path: a collective is a network
 * round-trip, so a malloc and a write(2) per execution cost nothing next
 * to it, and kernels of other types never come here (hooks_kernel.c decides
 * once per kernel, on its cache miss).
 *
 * Where the keys are (TensorFlow 2.21, collective_ops.cc):
 *   V2 ops (what MultiWorkerMirroredStrategy issues in tf.function): the
 *     scalar int32 *inputs* group_size, group_key, instance_key, read at
 *     dispatch through OpKernelContext::input(int) and Tensor::tensor_data(),
 *     both exported by libtensorflow_framework.so.2; the input indices come
 *     from the op's definition (so always in range for that op).
 *   V1 ops (what MultiWorkerMirroredStrategy issues eagerly to broadcast the
 *     initial variables): *attributes*; read for eager ops through
 *     TFE_OpGetAttrs + TFE_OpAttrsSerialize (a NameAttrList proto).  In a
 *     graph their keys are not read (key_status says so).
 *
 * Completion of a graph collective: ThreadPoolDevice::ComputeAsync takes its
 * done callback, a std::function<void()>, by value, i.e. (Itanium C++ ABI)
 * as a pointer to the caller's object.  libstdc++ lays it out as 16 bytes
 * of functor storage, a manager and an invoker pointer; moving it is copying
 * those 32 bytes and clearing the source's manager (what its move
 * constructor does).  agprof_wrap moves the original into a heap object and
 * passes ComputeAsync a std::function of its own whose invoker records the
 * time and calls the original; the manager clones and destroys the heap
 * object with the original's own manager.
 */
#include "collector.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The collective op types, by name: where their keys are. */
struct coll_op {
	const char *type;
	int size_in, group_in, instance_in;  /* input indices; -1: the keys are attributes (V1) */
};

static const struct coll_op coll_ops[] = {
	{ "CollectiveReduceV2", 1, 2, 3 },
	{ "CollectiveGatherV2", 1, 2, 3 },
	{ "CollectiveReduceScatterV2", 1, 2, 3 },
	{ "CollectiveBcastSendV2", 1, 2, 3 },
	{ "CollectiveBcastRecvV2", 0, 1, 2 },
	{ "CollectiveAllToAllV2", 1, 2, 3 },
	{ "CollectiveReduce", -1, -1, -1 },
	{ "CollectiveGather", -1, -1, -1 },
	{ "CollectiveBcastSend", -1, -1, -1 },
	{ "CollectiveBcastRecv", -1, -1, -1 },
};
#define NCOLL_OPS ((int)(sizeof(coll_ops) / sizeof(coll_ops[0])))

int agp_collective_kind(const char *type, size_t len)
{
	if (len < 10 || memcmp(type, "Collective", 10) != 0)
		return 0;
	for (int i = 0; i < NCOLL_OPS; i++)
		if (strlen(coll_ops[i].type) == len && !memcmp(coll_ops[i].type, type, len))
			return i + 1;
	return 0;
}

/* StringPiece is std::string_view in 2.21; libstdc++ keeps its length first.  Returned in rax:rdx. */
struct sv { size_t n; const char *p; };
typedef struct { const void *data; size_t length; void (*dealloc)(void *, size_t); } TF_Buffer;

static struct {
	const void *(*ctx_input)(const void *ctx, int index);
	struct sv (*tensor_data)(const void *tensor);
	const void *(*op_get_attrs)(const void *op);
	void (*attrs_serialize)(const void *attrs, TF_Buffer *buf, void *status);
	TF_Buffer *(*new_buffer)(void);
	void (*delete_buffer)(TF_Buffer *);
	void *(*new_status)(void);
	void (*delete_status)(void *);
	int (*get_code)(const void *);
	void *(*flat_input)(void *op, int index, void *status);
	void *(*handle_resolve)(void *h, void *status);
	void *(*tensor_data_c)(const void *t);
	size_t (*tensor_bytes)(const void *t);
	void (*delete_tensor)(void *t);
	const void *void_typeinfo;
	_Atomic int resolved;
} C;

static void coll_resolve(void)
{
	if (atomic_load_explicit(&C.resolved, memory_order_acquire))
		return;
	C.ctx_input = agp_tf_symbol("_ZNK10tensorflow15OpKernelContext5inputEi", NULL);
	C.tensor_data = agp_tf_symbol("_ZNK10tensorflow6Tensor11tensor_dataEv", NULL);
	C.op_get_attrs = agp_tf_symbol("TFE_OpGetAttrs", NULL);
	C.attrs_serialize = agp_tf_symbol("TFE_OpAttrsSerialize", NULL);
	C.new_buffer = agp_tf_symbol("TF_NewBuffer", NULL);
	C.delete_buffer = agp_tf_symbol("TF_DeleteBuffer", NULL);
	C.new_status = agp_tf_symbol("TF_NewStatus", NULL);
	C.delete_status = agp_tf_symbol("TF_DeleteStatus", NULL);
	C.get_code = agp_tf_symbol("TF_GetCode", NULL);
	C.flat_input = agp_tf_symbol("TFE_OpGetFlatInput", NULL);
	C.handle_resolve = agp_tf_symbol("TFE_TensorHandleResolve", NULL);
	C.tensor_data_c = agp_tf_symbol("TF_TensorData", NULL);
	C.tensor_bytes = agp_tf_symbol("TF_TensorByteSize", NULL);
	C.delete_tensor = agp_tf_symbol("TF_DeleteTensor", NULL);
	C.void_typeinfo = dlsym(RTLD_DEFAULT, "_ZTIv");
	atomic_store_explicit(&C.resolved, 1, memory_order_release);
}

/* A scalar integer tensor's value (int32 or int64, told by its byte size); 0 when read. */
static int scalar_value(const void *data, size_t n, int64_t *v)
{
	int32_t v32;

	if (n == sizeof(int32_t) && agp_safe_read(data, &v32, sizeof(v32)) == 0) {
		*v = v32;
		return 0;
	}
	return n == sizeof(int64_t) && agp_safe_read(data, v, sizeof(*v)) == 0 ? 0 : -1;
}

static void keys_init(struct agp_collective_keys *k, int kind)
{
	memset(k, 0, sizeof(*k));
	k->kind = kind;
	k->status = "not read";
}

/* A V2 op's key inputs from its kernel context (graph kernels). */
static void kernel_keys(const void *ctx, struct agp_collective_keys *k)
{
	const struct coll_op *op = &coll_ops[k->kind - 1];
	const int idx[3] = { op->size_in, op->group_in, op->instance_in };
	int64_t v[3];

	if (op->group_in < 0) {
		k->status = "a V1 collective in a graph: its keys are attributes, not read";
		return;
	}
	if (!C.ctx_input || !C.tensor_data) {
		k->status = "OpKernelContext::input or Tensor::tensor_data not found";
		return;
	}
	for (int i = 0; i < 3; i++) {
		const void *tensor = C.ctx_input(ctx, idx[i]);
		struct sv d = tensor ? C.tensor_data(tensor) : (struct sv){ 0, NULL };

		if (!d.p || scalar_value(d.p, d.n, &v[i]) != 0) {
			k->status = "a key input is not a readable scalar";
			return;
		}
	}
	k->group_size = v[0], k->group_key = v[1], k->instance_key = v[2];
	k->have = 1;
	k->status = NULL;
}

/* Emit the record of one collective execution. */
static void emit(const struct agp_collective_keys *k, int32_t tid, uint64_t start, uint64_t end, int graph)
{
	struct agp_side s;

	agp_side_begin(&s, AGP_SIDE_COLLECTIVE);
	agp_side_text(&s, AGP_F_NAME, coll_ops[k->kind - 1].type);
	agp_side_int(&s, AGP_F_TID, tid);
	agp_side_int(&s, AGP_F_START, (int64_t)start);
	agp_side_int(&s, AGP_F_END, (int64_t)end);
	agp_side_int(&s, AGP_F_COLL_GRAPH, graph);
	if (k->have) {
		agp_side_int(&s, AGP_F_COLL_GROUP_SIZE, k->group_size);
		agp_side_int(&s, AGP_F_COLL_GROUP_KEY, k->group_key);
		agp_side_int(&s, AGP_F_COLL_INSTANCE_KEY, k->instance_key);
	} else {
		agp_side_text(&s, AGP_F_COLL_KEY_STATUS, k->status);
	}
	agp_side_end(&s);
}

/* libstdc++'s std::function<void()> (bits/std_function.h). */
struct cxx_function {
	void *functor[2];
	bool (*manager)(void *dest, const void *src, int op);
	void (*invoker)(const void *functor);
};
enum { FN_GET_TYPE_INFO, FN_GET_FUNCTOR_PTR, FN_CLONE, FN_DESTROY };

struct wrap {
	struct cxx_function inner;  /* the original done callback, moved here */
	struct agp_collective_keys keys;
	uint64_t start;
	int32_t tid;
	_Atomic int emitted;
};

static void wrap_invoke(const void *functor)
{
	struct wrap *w = *(struct wrap *const *)functor;
	uint64_t end = agp_now_ns();
	int expected = 0;

	/* the collective is complete: its end is before what done goes on to run */
	if (atomic_compare_exchange_strong(&w->emitted, &expected, 1))
		emit(&w->keys, w->tid, w->start, end, 1);
	if (w->inner.invoker)
		w->inner.invoker(w->inner.functor);
}

static bool wrap_manage(void *dest, const void *src, int op)
{
	struct wrap *w = *(struct wrap *const *)src, *copy;

	switch (op) {
	case FN_GET_TYPE_INFO:
		*(const void **)dest = C.void_typeinfo;
		break;
	case FN_GET_FUNCTOR_PTR:
		*(void **)dest = w;
		break;
	case FN_CLONE:
		copy = malloc(sizeof(*copy));
		if (!copy)
			abort();  /* std::function's own clone would throw std::bad_alloc here */
		memcpy(copy, w, sizeof(*copy));
		if (w->inner.manager)
			w->inner.manager(copy->inner.functor, w->inner.functor, FN_CLONE);
		*(struct wrap **)dest = copy;
		break;
	case FN_DESTROY:
		w = *(struct wrap **)dest;
		if (w->inner.manager)
			w->inner.manager(w->inner.functor, w->inner.functor, FN_DESTROY);
		free(w);
		break;
	}
	return false;
}

void *agp_collective_wrap(struct agp_thread *t, int kind, const void *ctx, void *done, void *storage)
{
	struct cxx_function *orig = done, *mine = storage;
	struct wrap *w;

	coll_resolve();
	if (!kind || !orig || !orig->manager || !agp_capture_open() || !(w = calloc(1, sizeof(*w))))
		return done;
	keys_init(&w->keys, kind);
	kernel_keys(ctx, &w->keys);
	w->tid = t->tid;
	memcpy(&w->inner, orig, sizeof(w->inner));  /* std::function's move */
	orig->manager = NULL;
	orig->invoker = NULL;
	memset(mine, 0, sizeof(*mine));
	mine->functor[0] = w;
	mine->manager = wrap_manage;
	mine->invoker = wrap_invoke;
	w->start = agp_now_ns();
	return mine;
}

void agp_collective_unwrap(void *storage)
{
	struct cxx_function *mine = storage;

	/* the by-value parameter's destructor, which the caller runs */
	if (mine->manager)
		mine->manager(mine->functor, mine->functor, FN_DESTROY);
}

/* Protocol buffer reading (untrusted lengths): a varint at *p below end. */
static int pb_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64 && *p < end; shift += 7) {
		unsigned char b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

/* Skip (or, with len, return) the field whose key was read; -1 on bad input. */
static int pb_field(const unsigned char **p, const unsigned char *end, uint64_t key, const unsigned char **val,
		    uint64_t *len_or_int)
{
	*val = NULL;
	switch (key & 7) {
	case 0: return pb_varint(p, end, len_or_int);
	case 1: if (end - *p < 8) return -1; *p += 8; return 0;
	case 5: if (end - *p < 4) return -1; *p += 4; return 0;
	case 2:
		if (pb_varint(p, end, len_or_int) || *len_or_int > (uint64_t)(end - *p))
			return -1;
		*val = *p;
		*p += *len_or_int;
		return 0;
	}
	return -1;
}

/* One map<string, AttrValue> entry of a NameAttrList: the key's AttrValue.i when it is a key. */
static void attr_entry(const unsigned char *p, const unsigned char *end, struct agp_collective_keys *k, int *found)
{
	static const char *const names[3] = { "group_size", "group_key", "instance_key" };
	const unsigned char *name = NULL, *val = NULL, *v;
	uint64_t key, n, name_len = 0, ival = 0;
	int which = -1, have_i = 0;

	while (p < end && pb_varint(&p, end, &key) == 0 && pb_field(&p, end, key, &v, &n) == 0) {
		if (key >> 3 == 1 && v)
			name = v, name_len = n;
		else if (key >> 3 == 2 && v)
			val = v, ival = n;
	}
	for (int i = 0; name && i < 3; i++)
		if (strlen(names[i]) == name_len && !memcmp(name, names[i], name_len))
			which = i;
	if (which < 0 || !val)
		return;
	for (const unsigned char *q = val, *qe = val + ival; q < qe && pb_varint(&q, qe, &key) == 0;) {
		if (pb_field(&q, qe, key, &v, &n) != 0)
			break;
		if (key == (3 << 3))  /* AttrValue.i, a varint */
			have_i = 1, ival = n;
	}
	if (!have_i)
		return;
	if (which == 0)
		k->group_size = (int64_t)ival;
	else if (which == 1)
		k->group_key = (int64_t)ival;
	else
		k->instance_key = (int64_t)ival;
	*found |= 1 << which;
}

/* A V1 eager op's keys: its attributes, serialized as a NameAttrList (attr = field 2). */
static void eager_attr_keys(void *op, struct agp_collective_keys *k)
{
	TF_Buffer *buf;
	void *st;
	int found = 0;

	if (!C.op_get_attrs || !C.attrs_serialize || !C.new_buffer || !C.delete_buffer || !C.new_status ||
	    !C.delete_status || !C.get_code) {
		k->status = "TFE_OpGetAttrs or TFE_OpAttrsSerialize not found";
		return;
	}
	buf = C.new_buffer(), st = C.new_status();
	if (buf && st) {
		C.attrs_serialize(C.op_get_attrs(op), buf, st);
		if (C.get_code(st) == 0 && buf->data) {
			const unsigned char *p = buf->data, *end = p + buf->length, *v;
			uint64_t key, n;

			while (p < end && pb_varint(&p, end, &key) == 0 && pb_field(&p, end, key, &v, &n) == 0)
				if (key >> 3 == 2 && v)
					attr_entry(v, v + n, k, &found);
		}
	}
	if (buf)
		C.delete_buffer(buf);
	if (st)
		C.delete_status(st);
	k->have = found == 7;
	k->status = k->have ? NULL : "the op's attributes hold no group_size, group_key, instance_key";
}

/* A V2 eager op's key inputs: its input handles, resolved to host tensors. */
static void eager_input_keys(void *op, const struct coll_op *c, struct agp_collective_keys *k)
{
	const int idx[3] = { c->size_in, c->group_in, c->instance_in };
	int64_t v[3];
	void *st;
	int ok = 1;

	if (!C.flat_input || !C.handle_resolve || !C.tensor_data_c || !C.tensor_bytes || !C.delete_tensor ||
	    !C.new_status || !C.delete_status || !C.get_code || !(st = C.new_status())) {
		k->status = "TFE_OpGetFlatInput or TFE_TensorHandleResolve not found";
		return;
	}
	for (int i = 0; i < 3 && ok; i++) {
		void *h = C.flat_input(op, idx[i], st), *tensor;

		tensor = h && C.get_code(st) == 0 ? C.handle_resolve(h, st) : NULL;
		ok = tensor && C.get_code(st) == 0 && scalar_value(C.tensor_data_c(tensor), C.tensor_bytes(tensor), &v[i]) == 0;
		if (tensor)
			C.delete_tensor(tensor);
	}
	C.delete_status(st);
	if (!ok) {
		k->status = "a key input is not a readable scalar";
		return;
	}
	k->group_size = v[0], k->group_key = v[1], k->instance_key = v[2];
	k->have = 1;
	k->status = NULL;
}

void agp_collective_eager_keys(void *op, int kind, struct agp_collective_keys *k)
{
	coll_resolve();
	keys_init(k, kind);
	if (coll_ops[kind - 1].group_in < 0)
		eager_attr_keys(op, k);
	else
		eager_input_keys(op, &coll_ops[kind - 1], k);
}

void agp_collective_eager_done(const struct agp_thread *t, const struct agp_collective_keys *k, uint64_t start,
			       uint64_t end)
{
	if (agp_capture_open())
		emit(k, t->tid, start, end, 0);
}
