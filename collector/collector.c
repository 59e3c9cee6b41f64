/*
 * collector.c - process and thread state of the injected collector: the
 * shared-memory files, per-thread rings, string interning, side records,
 * fork handling.  See collector.h for the rules every hook follows.
 */
#include "collector.h"
#include "gpu_record.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <unistd.h>

struct agp_process agp_proc;

__thread struct agp_thread *agp_tls __attribute__((tls_model("initial-exec")));
static pthread_mutex_t side_lock = PTHREAD_MUTEX_INITIALIZER;
/* Its destructor runs at each recording thread's end (thread_end); made once per process. */
static pthread_key_t thread_key;
static int thread_key_made;
static char shm_dir[PATH_MAX];

/* The launcher's variables, hidden from the workload's environment. */
char agp_env_preload[PATH_MAX * 2] AGP_HIDDEN;  /* the collector's path, first in LD_PRELOAD */
char agp_env_shm[PATH_MAX] AGP_HIDDEN;
char agp_env_cuda[PATH_MAX] AGP_HIDDEN;         /* CUDA_INJECTION64_PATH set by the launcher */

void agp_disable(const char *why)
{
	static const char prefix[] = "agprof: collector turned off: ";
	char line[512];
	int n;

	if (!agp_proc.enabled)
		return;
	agp_proc.enabled = 0;
	n = snprintf(line, sizeof(line), "%s%s\n", prefix, why);
	if (n > 0 && write(2, line, (size_t)(n < (int)sizeof(line) ? n : (int)sizeof(line) - 1)) < 0)
		return;
}

static void remember_file(int fd, uint64_t *dev, uint64_t *ino)
{
	struct stat st;

	*dev = *ino = 0;
	if (fstat(fd, &st) == 0)
		*dev = st.st_dev, *ino = st.st_ino;
}

/* Whether fd is still the file it was opened as (rare path: one fstat). */
static int fd_is_ours(int fd, uint64_t dev, uint64_t ino)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

static int open_process_files(void)
{
	char path[PATH_MAX + 64];
	int fd = -1;
	void *map;

	for (int n = 0; n < 1000; n++) {
		snprintf(path, sizeof(path), "%s/%d-%d.ring", shm_dir, agp_proc.pid, n);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0)
		return -1;
	/*
	 * Sparse file; the header's pages are reserved now and each ring's when
	 * a thread claims it, so that a full /dev/shm means a refused slot
	 * (counted), never a SIGBUS in the workload.
	 */
	if (ftruncate(fd, (off_t)AGP_SHM_FILE_BYTES) != 0 || fallocate(fd, 0, 0, AGP_HEADER_BYTES) != 0) {
		close(fd);
		return -1;
	}
	map = mmap(NULL, AGP_SHM_FILE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		close(fd);
		return -1;
	}
	if (agp_proc.shm_fd >= 0)
		close(agp_proc.shm_fd);
	agp_proc.shm_fd = fd;
	remember_file(fd, &agp_proc.shm_dev, &agp_proc.shm_ino);
	/* The side file shares the ring file's name: the launcher pairs them. */
	memcpy(path + strlen(path) - 4, "side", 4);
	agp_proc.side_fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
	if (agp_proc.side_fd < 0) {
		munmap(map, AGP_SHM_FILE_BYTES);
		return -1;
	}
	remember_file(agp_proc.side_fd, &agp_proc.side_dev, &agp_proc.side_ino);
	agp_proc.shm = map;
	agp_proc.shm->ring_bytes = AGP_RING_BYTES;
	agp_proc.shm->max_threads = AGP_MAX_THREADS;
	agp_proc.shm->pid = agp_proc.pid;
	agp_proc.shm->ppid = getppid();
	agp_proc.shm->start_ns = agp_now_ns();
	/* Publish the magic last: the launcher ignores files without it. */
	__atomic_store_n(&agp_proc.shm->magic, AGP_SHM_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

static void emit_process_record(void)
{
	struct agp_side s;
	char buf[8192], cwd[PATH_MAX];
	ssize_t n = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	agp_side_begin(&s, AGP_SIDE_PROCESS);
	agp_side_int(&s, AGP_F_PID, agp_proc.pid);
	agp_side_int(&s, AGP_F_PPID, getppid());
	agp_side_int(&s, AGP_F_START, (int64_t)agp_proc.shm->start_ns);
	agp_side_bytes(&s, AGP_F_ARGV, buf, n > 0 ? (size_t)n : 0);  /* NUL-separated */
	if (getcwd(cwd, sizeof(cwd)))
		agp_side_text(&s, AGP_F_CWD, cwd);
	agp_side_end(&s);
}

static int process_start(void)
{
	agp_proc.pid = getpid();
	agp_proc.generation++;
	atomic_store(&agp_proc.next_string_id, 1);
	atomic_store(&agp_proc.next_site_id, 1);
	atomic_store(&agp_proc.next_seq, 1);
	atomic_store(&agp_proc.next_trace_seq, 1);
	atomic_store(&agp_proc.active_calls, 0);
	atomic_store(&agp_proc.last_call_seq, 0);
	if (open_process_files() != 0)
		return -1;
	agp_proc.enabled = 1;
	emit_process_record();
	agp_capture_start();
	return 0;
}

/* Let go of the ring mapping and the side file (a forked child's, an earlier attach's). */
static void release_buffers(void)
{
	if (agp_proc.shm)
		munmap(agp_proc.shm, AGP_SHM_FILE_BYTES);
	agp_proc.shm = NULL;
	if (agp_proc.side_fd >= 0)
		close(agp_proc.side_fd);
	agp_proc.side_fd = -1;
}

static void on_fork_child(void)
{
	if (!agp_proc.enabled)
		return;
	/* The parent's mapping is shared: let go of it, never write into it. */
	agp_proc.enabled = 0;
	agp_capture_fork();
	release_buffers();
	if (agp_proc.shm_fd >= 0)
		close(agp_proc.shm_fd);
	agp_proc.shm_fd = -1;
	pthread_mutex_init(&side_lock, NULL);
	agp_tls = NULL;  /* the forking thread starts afresh in the child */
	if (process_start() != 0)
		agp_disable("cannot create the recording buffers in a forked child");
}

enum frame_kind { FRAME_UNSEEN, FRAME_OTHER, FRAME_TF_DATA, FRAME_POOL };

static enum frame_kind frame_kind_named(void *pc)
{
	Dl_info di;

	if (!dladdr(pc, &di) || !di.dli_sname)
		return FRAME_OTHER;
	if (strstr(di.dli_sname, "N10tensorflow4data"))
		return FRAME_TF_DATA;
	if (strstr(di.dli_sname, "ThreadPool") || strstr(di.dli_sname, "EigenThreadPool"))
		return FRAME_POOL;
	return FRAME_OTHER;
}

/*
 * What a return address tells of its thread, remembered: dladdr scans the
 * library's whole symbol table (libtensorflow_cc's: milliseconds a frame),
 * and the threads a program starts share their frames.  A Keras fit's 86
 * threads each paid it at their first kernel: 2.6% of the program's CPU.
 * Lock-free: the first to claim an entry fills it, the others (a race, a
 * full run of probes) ask dladdr themselves.
 */
#define FRAME_MEMO 1024
#define FRAME_PROBES 8

static struct {
	_Atomic uintptr_t pc;
	_Atomic uint8_t kind;  /* enum frame_kind, FRAME_UNSEEN until filled */
} frame_memo[FRAME_MEMO];

static enum frame_kind frame_kind(void *pc)
{
	uintptr_t key = (uintptr_t)pc;
	uint32_t home = (uint32_t)(((uint64_t)key * 0x9e3779b97f4a7c15ULL) >> 54);  /* 10 bits: FRAME_MEMO */
	enum frame_kind kind;

	_Static_assert(FRAME_MEMO == 1 << 10, "frame memo bits");
	for (uint32_t i = 0; key && i < FRAME_PROBES; i++) {
		__typeof__(frame_memo[0]) *e = &frame_memo[(home + i) & (FRAME_MEMO - 1)];
		uintptr_t seen = atomic_load_explicit(&e->pc, memory_order_acquire);

		if (!seen && atomic_compare_exchange_strong(&e->pc, &seen, key)) {
			kind = frame_kind_named(pc);
			atomic_store_explicit(&e->kind, (uint8_t)kind, memory_order_release);
			return kind;
		}
		if (seen == key) {
			kind = atomic_load_explicit(&e->kind, memory_order_acquire);
			return kind != FRAME_UNSEEN ? kind : frame_kind_named(pc);
		}
	}
	return frame_kind_named(pc);
}

/*
 * TensorFlow leaves its tf.data worker threads unnamed, so the thread name
 * cannot tell them apart: look at the native stack once, on the thread's
 * first event, for tensorflow::data frames.
 */
static int32_t classify_thread(void)
{
	void *frames[64];
	int n = backtrace(frames, 64), role = AGP_ROLE_UNKNOWN;

	for (int i = 0; i < n; i++) {
		enum frame_kind kind = frame_kind(frames[i]);

		if (kind == FRAME_TF_DATA)
			return AGP_ROLE_TF_DATA;
		if (kind == FRAME_POOL)
			role = AGP_ROLE_TF_EXECUTOR;
	}
	return role;
}

/*
 * A ring slot for the calling thread, in state CLAIMING: a FREE one taken
 * back (the launcher has drained its last owner), else the next one never
 * used; AGP_MAX_THREADS when every slot is LIVE or ENDED.  *claims gets the
 * new owner's number.  Rare path (a thread's first event), but a thread
 * past the cap comes back at each of its events: two loads then.
 */
static uint32_t slot_claim(uint32_t *claims)
{
	struct agp_shm_header *h = agp_proc.shm;
	uint32_t n = atomic_load_explicit(&h->nthreads, memory_order_relaxed);

	if (atomic_load_explicit(&h->free_slots, memory_order_relaxed)) {
		for (uint32_t i = 0; i < n && i < AGP_MAX_THREADS; i++) {
			_Atomic uint32_t *state = &h->threads[i].state;
			uint32_t word = atomic_load_explicit(state, memory_order_relaxed);

			if ((word & AGP_SLOT_MASK) != AGP_SLOT_FREE)
				continue;
			*claims = (word >> AGP_SLOT_BITS) + 1;
			/* acquire: the launcher's reads of the last owner's ring and totals come before */
			if (atomic_compare_exchange_strong_explicit(state, &word, AGP_SLOT_WORD(*claims, AGP_SLOT_CLAIMING),
								    memory_order_acquire, memory_order_relaxed)) {
				atomic_fetch_sub_explicit(&h->free_slots, 1, memory_order_relaxed);
				return i;
			}
		}
	}
	/* Look before claiming, else 2^32 events past the cap would wrap nthreads to a taken slot. */
	if (n >= AGP_MAX_THREADS || (n = atomic_fetch_add(&h->nthreads, 1)) >= AGP_MAX_THREADS)
		return AGP_MAX_THREADS;
	*claims = 1;
	atomic_store_explicit(&h->threads[n].state, AGP_SLOT_WORD(1, AGP_SLOT_CLAIMING), memory_order_relaxed);
	return n;
}

/*
 * No slot at this thread's first event, but some ENDED ones await the
 * launcher's next poll (a storm of threads just ended): wait for one, at
 * most AGP_SLOT_WAIT_NS and once per thread, while a launcher polls.  A
 * thread past a cap of live threads, or of no launcher, records nothing
 * at once.  Rare path: sleeping here is allowed.
 */
static uint32_t slot_wait(uint32_t *claims)
{
	static __thread int waited __attribute__((tls_model("initial-exec")));
	struct agp_shm_header *h = agp_proc.shm;
	const struct timespec step = {0, 1000000};
	uint64_t start = agp_now_ns(), now = start;
	uint32_t slot = AGP_MAX_THREADS;

	if (waited)
		return slot;
	waited = 1;
	while (slot >= AGP_MAX_THREADS && now - start < AGP_SLOT_WAIT_NS) {
		uint64_t polled = atomic_load_explicit(&h->launcher_poll_ns, memory_order_relaxed);

		if (atomic_load_explicit(&h->live_threads, memory_order_relaxed) >= AGP_MAX_THREADS ||
		    !polled || now > polled + 2 * AGP_SLOT_WAIT_NS)
			break;
		nanosleep(&step, NULL);
		slot = slot_claim(claims);
		now = agp_now_ns();
	}
	return slot;
}

/* A slot claimed but not set up (no room in /dev/shm, no memory) goes back to FREE. */
static void slot_unclaim(uint32_t slot, uint32_t claims)
{
	struct agp_shm_header *h = agp_proc.shm;

	atomic_fetch_add_explicit(&h->free_slots, 1, memory_order_relaxed);  /* before the state: never below 0 */
	atomic_store_explicit(&h->threads[slot].state, AGP_SLOT_WORD(claims, AGP_SLOT_FREE), memory_order_release);
	atomic_fetch_add(&h->dropped_no_slot, 1);
}

/* The thread's state and what it allocated. */
static void thread_state_free(struct agp_thread *t)
{
	free(t->op_files);
	munmap(t, sizeof(*t));
}

/*
 * The thread ends (the pthread key's destructor, after C++ thread_local
 * destructors and with the thread's hooks all returned): its slot becomes
 * ENDED, the release store ordering every record it published before it;
 * the launcher drains the ring to that head, then frees the slot.  A
 * state of an earlier process image (a forked child's copy, a stopped
 * attach) has no slot here: only its memory goes.
 */
static void thread_end(void *arg)
{
	struct agp_thread *t = arg;
	uint32_t word;

	if (agp_tls == t)
		agp_tls = NULL;  /* a hook later in this thread's exit claims anew: the next destructor round gives it back */
	if (t->generation == agp_proc.generation && agp_proc.shm) {
		word = atomic_load_explicit(&t->ring->state, memory_order_relaxed);
		/* the launcher reads (and clears) no more of its totals than it used: a thread of no kernel, none */
		t->ring->ktotals_used = t->ktotals ? t->kused : 0;
		if ((word & AGP_SLOT_MASK) == AGP_SLOT_LIVE)
			atomic_store_explicit(&t->ring->state, (word & ~AGP_SLOT_MASK) | AGP_SLOT_ENDED,
					      memory_order_release);
		atomic_fetch_sub_explicit(&agp_proc.shm->live_threads, 1, memory_order_relaxed);
	}
	thread_state_free(t);
}

/* Once per process: the key whose destructor tells thread_end (without it, slots are never given back). */
static void thread_key_init(void)
{
	if (!thread_key_made)
		thread_key_made = pthread_key_create(&thread_key, thread_end) == 0;
}

struct agp_thread *agp_thread_new(void)
{
	struct agp_thread *t = agp_tls;
	uint32_t slot, capacity, claims = 0;
	int32_t tid, role;
	void *mem;

	if (!agp_proc.enabled)
		return NULL;
	/* First event of this thread in this process: the rare path. */
	if (t && t->generation != agp_proc.generation) {
		thread_state_free(t);
		agp_tls = NULL;
	}
	if ((slot = slot_claim(&claims)) >= AGP_MAX_THREADS && (slot = slot_wait(&claims)) >= AGP_MAX_THREADS) {
		atomic_fetch_add(&agp_proc.shm->dropped_no_slot, 1);
		return NULL;
	}
	/*
	 * The main thread runs the eager loops, executor threads the kernels of
	 * graph calls; other threads record little.
	 */
	tid = (int32_t)syscall(SYS_gettid);
	role = tid == agp_proc.pid ? AGP_ROLE_UNKNOWN : classify_thread();
	capacity = tid == agp_proc.pid ? AGP_RING_MAIN_BYTES
		   : role == AGP_ROLE_TF_EXECUTOR && !agp_proc.kernels_off ? AGP_RING_EXECUTOR_BYTES
									  : AGP_RING_OTHER_BYTES;
	if (!fd_is_ours(agp_proc.shm_fd, agp_proc.shm_dev, agp_proc.shm_ino) ||
	    fallocate(agp_proc.shm_fd, 0, (off_t)(AGP_HEADER_BYTES + (uint64_t)slot * AGP_RING_BYTES),
		      capacity) != 0) {
		slot_unclaim(slot, claims);
		return NULL;
	}
	mem = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		slot_unclaim(slot, claims);
		return NULL;
	}
	t = mem;
	t->generation = agp_proc.generation;
	t->tid = tid;
	t->ring = &agp_proc.shm->threads[slot];
	t->data = (char *)agp_proc.shm + AGP_HEADER_BYTES + (size_t)slot * AGP_RING_BYTES;
	t->ring_bytes = capacity;
	t->ring->capacity = capacity;
	t->ring->role = role;
	atomic_store_explicit(&t->ring->tid, t->tid, memory_order_relaxed);
	atomic_fetch_add_explicit(&agp_proc.shm->live_threads, 1, memory_order_relaxed);
	/* head == tail (the last owner was drained): the ring is empty whatever its new capacity */
	atomic_store_explicit(&t->ring->state, AGP_SLOT_WORD(claims, AGP_SLOT_LIVE), memory_order_release);
	if (thread_key_made)
		pthread_setspecific(thread_key, t);  /* may allocate: the rare path allows it */
	agp_tls = t;
	return t;
}

/*
 * The thread's kernel totals table in the ring file (rare path: the
 * thread's first kernel), its pages reserved like a ring's so that a full
 * /dev/shm is an error here and never a SIGBUS in a hook; NULL when they
 * cannot be.
 */
struct agp_kernel_total *agp_kernel_totals_map(struct agp_thread *t)
{
	uint64_t slot = (uint64_t)(t->ring - agp_proc.shm->threads);
	off_t off = (off_t)(AGP_KTOTAL_OFFSET + slot * AGP_KTOTAL_BYTES);

	if (!fd_is_ours(agp_proc.shm_fd, agp_proc.shm_dev, agp_proc.shm_ino) ||
	    fallocate(agp_proc.shm_fd, 0, off, (off_t)AGP_KTOTAL_BYTES) != 0)
		return NULL;
	/* all zeros, also in a slot that had owners: the launcher cleared what it read before freeing it */
	return (struct agp_kernel_total *)((char *)agp_proc.shm + off);
}

/*
 * Reserve `words` 8-byte words in the thread's ring; returns where to write,
 * or NULL (and counts a drop) when the launcher has fallen behind.
 */
static void *ring_reserve(struct agp_thread *t, uint32_t words, uint64_t *new_head)
{
	uint64_t head = atomic_load_explicit(&t->ring->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&t->ring->tail, memory_order_acquire);
	uint64_t bytes = (uint64_t)words * 8;
	uint64_t off = head & (t->ring_bytes - 1);
	uint64_t room_to_end = t->ring_bytes - off;
	uint64_t need = bytes;

	if (room_to_end < bytes)
		need += room_to_end;   /* skip the end of the ring */
	if (t->ring_bytes - (head - tail) < need) {
		atomic_fetch_add_explicit(&t->ring->dropped, 1, memory_order_relaxed);
		return NULL;
	}
	if (room_to_end < bytes) {
		struct agp_rec_hdr *wrap = (struct agp_rec_hdr *)(t->data + off);

		wrap->type = AGP_REC_WRAP;
		wrap->words = 0;
		head += room_to_end;
		off = 0;
	}
	*new_head = head + bytes;
	return t->data + off;
}

static inline void ring_publish(struct agp_thread *t, uint64_t new_head)
{
	atomic_store_explicit(&t->ring->head, new_head, memory_order_release);
}

#define FNV_OFFSET 1469598103934665603ULL
#define FNV_PRIME 1099511628211ULL

static inline uint64_t fnv_step(uint64_t h, unsigned char c)
{
	return (h ^ c) * FNV_PRIME;
}

static inline uint64_t hash_text(const char *s, size_t len)
{
	uint64_t h = FNV_OFFSET;

	for (size_t i = 0; i < len; i++)
		h = fnv_step(h, (unsigned char)s[i]);
	return h | 1;  /* 0 marks an empty slot */
}

/* hash_text of a NUL-terminated name, its length found in the same pass: no strlen call per op. */
static inline uint64_t hash_name(const char *s, size_t *len)
{
	uint64_t h = FNV_OFFSET;
	size_t i;

	for (i = 0; s[i]; i++)
		h = fnv_step(h, (unsigned char)s[i]);
	*len = i;
	return h | 1;
}

/* Flags kept in a cache slot's len: what agp_intern_op learned about the text. */
#define STRCACHE_READ 0x04000000u
#define STRCACHE_DATASET 0x08000000u
#define STRCACHE_COLLECTIVE 0x10000000u
#define STRCACHE_CAPTURE 0x20000000u
#define STRCACHE_CLASSIFIED 0x40000000u
#define STRCACHE_FUNCTION 0x80000000u
#define STRCACHE_LEN(slot) ((slot)->len & ~(STRCACHE_CLASSIFIED | STRCACHE_FUNCTION | STRCACHE_CAPTURE | \
					  STRCACHE_COLLECTIVE | STRCACHE_DATASET | STRCACHE_READ))

/*
 * text's cache slot (h its hash_text), or NULL.  Short texts are compared
 * inline, byte by byte: op names are a few bytes, and a memcmp call cost
 * more than the comparison (docs/collector.md, "Cost per op").
 */
static inline struct agp_strcache_slot *strcache_hit(struct agp_thread *t, const char *text, size_t len, uint64_t h)
{
	struct agp_strcache_slot *slot = &t->strcache[h & (AGP_STRCACHE - 1)];

	if (slot->hash != h || STRCACHE_LEN(slot) != len)
		return NULL;
	if (len <= sizeof(slot->text))
		for (size_t i = 0; i < len; i++)
			if (slot->text[i] != text[i])
				return NULL;
	return slot;
}

/*
 * A text the cache lacks (rare): a new id, its string record, and the slot
 * (*slot_out; NULL when the ring is full).  Out of line and cold, so that
 * the hit path the hooks run per op stays a few cache lines.
 */
static __attribute__((noinline, cold)) uint32_t intern_new(struct agp_thread *t, const char *text, size_t len,
							   uint64_t h, struct agp_strcache_slot **slot_out)
{
	struct agp_strcache_slot *slot = &t->strcache[h & (AGP_STRCACHE - 1)];
	uint32_t id, words;
	uint64_t new_head;
	struct agp_rec_hdr *rec;

	*slot_out = NULL;
	if (len > 4096)
		len = 4096;
	words = (uint32_t)(1 + (len + 1 + 7) / 8);
	rec = ring_reserve(t, words, &new_head);
	if (!rec)
		return 0;
	id = atomic_fetch_add_explicit(&agp_proc.next_string_id, 1, memory_order_relaxed);
	rec->type = AGP_REC_STRING;
	rec->words = (uint16_t)words;
	rec->arg = id;
	memcpy(rec + 1, text, len);
	((char *)(rec + 1))[len] = '\0';
	ring_publish(t, new_head);
	slot->hash = h;
	slot->len = (uint32_t)len;
	slot->id = id;
	if (len <= sizeof(slot->text))
		memcpy(slot->text, text, len);
	*slot_out = slot;
	return id;
}

/* Intern text of hash h; *slot_out gets its cache slot (NULL when it could not be cached). */
static inline uint32_t intern_hashed(struct agp_thread *t, const char *text, size_t len, uint64_t h,
				     struct agp_strcache_slot **slot_out)
{
	if (__builtin_expect((*slot_out = strcache_hit(t, text, len, h)) != NULL, 1))
		return (*slot_out)->id;
	return intern_new(t, text, len, h, slot_out);
}

static uint32_t intern_slot(struct agp_thread *t, const char *text, size_t len,
			    struct agp_strcache_slot **slot_out)
{
	return intern_hashed(t, text, len, hash_text(text, len), slot_out);
}

uint32_t agp_intern(struct agp_thread *t, const char *text, size_t len)
{
	struct agp_strcache_slot *slot;

	return intern_slot(t, text, len, &slot);
}

/*
 * tf.data's eager ops that make a dataset ("...Dataset", "...DatasetV2") or
 * an iterator, bind one to the other, or read it: their handles link a
 * pipeline's stages, its iterator and the loop reading it.
 */
static int dataset_op_flags(const char *name)
{
	static const char *const reads[] = {
		"IteratorGetNext", "IteratorGetNextSync", "IteratorGetNextAsOptional", NULL,
	};
	const char *ds = strstr(name, "Dataset");

	for (size_t i = 0; reads[i]; i++)
		if (!strcmp(name, reads[i]))
			return AGP_OP_DATASET | AGP_OP_READ;
	if (!strncmp(name, "AnonymousIterator", 17) || !strcmp(name, "MakeIterator"))
		return AGP_OP_DATASET;
	if (ds && (!ds[7] || (ds[7] == 'V' && ds[8] >= '0' && ds[8] <= '9' && !ds[9])))
		return AGP_OP_DATASET;
	return 0;
}

/* AGP_OP_* flags of an op name (asked once per cached name). */
static int classify_op(const char *name, int (*is_function)(const char *))
{
	if (!is_function(name))
		return agp_collective_kind(name, strlen(name)) ? AGP_OP_COLLECTIVE : dataset_op_flags(name);
	return AGP_OP_FUNCTION | (agp_capture_match(name) ? AGP_OP_CAPTURE : 0);
}

uint32_t agp_intern_op(struct agp_thread *t, const char *name, int (*is_function)(const char *), int *flags)
{
	struct agp_strcache_slot *slot;
	size_t len;
	uint64_t h = hash_name(name, &len);
	uint32_t id = intern_hashed(t, name, len, h, &slot);
	int f;

	if (!slot) {
		*flags = classify_op(name, is_function);
		return id;
	}
	/* Functions are registered before their first call and an op never
	 * becomes one: classifying a name once per cache slot is enough. */
	if (__builtin_expect(!(slot->len & STRCACHE_CLASSIFIED), 0)) {
		f = classify_op(name, is_function);
		slot->len |= STRCACHE_CLASSIFIED | (f & AGP_OP_FUNCTION ? STRCACHE_FUNCTION : 0) |
			     (f & AGP_OP_CAPTURE ? STRCACHE_CAPTURE : 0) | (f & AGP_OP_COLLECTIVE ? STRCACHE_COLLECTIVE : 0) |
			     (f & AGP_OP_DATASET ? STRCACHE_DATASET : 0) | (f & AGP_OP_READ ? STRCACHE_READ : 0);
	}
	*flags = (slot->len & STRCACHE_FUNCTION ? AGP_OP_FUNCTION : 0) | (slot->len & STRCACHE_CAPTURE ? AGP_OP_CAPTURE : 0) |
		 (slot->len & STRCACHE_COLLECTIVE ? AGP_OP_COLLECTIVE : 0) |
		 (slot->len & STRCACHE_DATASET ? AGP_OP_DATASET : 0) | (slot->len & STRCACHE_READ ? AGP_OP_READ : 0);
	return id;
}

uint32_t agp_site_define(struct agp_thread *t, uint32_t file, uint32_t func, uint32_t line, uint32_t parent,
			 uint32_t flags)
{
	uint64_t new_head;
	struct agp_rec_site *rec = ring_reserve(t, sizeof(*rec) / 8, &new_head);
	uint32_t id;

	if (!rec)
		return 0;
	id = atomic_fetch_add_explicit(&agp_proc.next_site_id, 1, memory_order_relaxed);
	rec->h.type = AGP_REC_SITE;
	rec->h.words = sizeof(*rec) / 8;
	rec->h.arg = id;
	rec->file = file;
	rec->func = func;
	rec->line = line;
	rec->parent = parent;
	rec->flags = flags;
	rec->pad = 0;
	ring_publish(t, new_head);
	return id;
}

/*
 * Room for one high-rate event (a span, a Session step: whatever the
 * capture window applies to), or NULL while the window is closed.  The one
 * place the window gates events: a new event record type reserves here.
 */
static void *event_reserve(struct agp_thread *t, uint32_t words, uint64_t *new_head)
{
	if (!agp_capture_open())
		return NULL;
	return ring_reserve(t, words, new_head);
}

void agp_emit_span(struct agp_thread *t, uint16_t type, uint32_t arg, uint64_t start, uint64_t end,
		   uint32_t aux, uint32_t site, uint32_t flags, uint32_t aux2, uint64_t seq)
{
	uint64_t new_head;
	struct agp_rec_span *rec = event_reserve(t, sizeof(*rec) / 8, &new_head);

	if (!rec)
		return;
	rec->h.type = type;
	rec->h.words = sizeof(*rec) / 8;
	rec->h.arg = arg;
	rec->start_ns = start;
	rec->end_ns = end;
	rec->aux = aux;
	rec->site = site;
	rec->flags = flags;
	rec->aux2 = aux2;
	rec->seq = seq;
	ring_publish(t, new_head);
}

void agp_emit_kernel(struct agp_thread *t, uint32_t name, uint32_t type, uint64_t start, uint64_t end,
		     uint32_t call_seq, uint32_t flags)
{
	uint64_t new_head, dur = end > start ? end - start : 0;
	uint64_t used = atomic_load_explicit(&t->ring->head, memory_order_relaxed) -
			atomic_load_explicit(&t->ring->tail, memory_order_acquire);
	struct agp_rec_kernel *rec;

	/* a call's cut goes past the room: the launcher must learn it, or keep the call's rows (one record a call) */
	if (used >= t->ring_bytes / AGP_KERNEL_ROOM_DIV && !(flags & AGP_KERNEL_CUT)) {
		if (agp_capture_open())  /* a closed window drops nothing */
			atomic_fetch_add_explicit(&t->ring->dropped_kernels, 1, memory_order_relaxed);
		return;
	}
	rec = event_reserve(t, sizeof(*rec) / 8, &new_head);
	if (!rec)
		return;
	rec->h.type = AGP_REC_KERNEL;
	rec->h.words = sizeof(*rec) / 8;
	rec->h.arg = name;
	rec->start_ns = start;
	rec->dur_ns = dur > AGP_KERNEL_DUR_MAX ? AGP_KERNEL_DUR_MAX : (uint32_t)dur;
	rec->type = type;
	rec->call_seq = call_seq;
	rec->flags = flags;
	ring_publish(t, new_head);
}

int agp_emit_kernel_agg(struct agp_thread *t, const struct agp_kernel_total *k)
{
	uint64_t new_head;
	struct agp_rec_kernel_agg *rec = ring_reserve(t, sizeof(*rec) / 8, &new_head);

	if (!rec)
		return -1;
	rec->h.type = AGP_REC_KERNEL_AGG;
	rec->h.words = sizeof(*rec) / 8;
	rec->h.arg = k->name;
	rec->type = k->type;
	rec->call_seq = k->call_seq;
	rec->timed = k->timed;
	rec->pad = 0;
	rec->count = k->count;
	rec->timed_ns = k->timed_ns;
	ring_publish(t, new_head);
	return 0;
}

void agp_emit_session(struct agp_thread *t, uint32_t kind, uint64_t start, uint64_t end, uint32_t site,
		      uint32_t flags, uint32_t feeds, uint32_t fetches, uint32_t targets)
{
	uint64_t new_head;
	struct agp_rec_session *rec = event_reserve(t, sizeof(*rec) / 8, &new_head);

	if (!rec)
		return;
	rec->h.type = AGP_REC_SESSION;
	rec->h.words = sizeof(*rec) / 8;
	rec->h.arg = kind;
	rec->start_ns = start;
	rec->end_ns = end;
	rec->site = site;
	rec->flags = flags;
	rec->feeds = feeds;
	rec->fetches = fetches;
	rec->targets = targets;
	rec->pad = 0;
	ring_publish(t, new_head);
}

/* Side records */

static void side_reserve(struct agp_side *s, size_t extra)
{
	size_t want = s->len + extra;
	char *nb;

	if (s->failed || want <= s->cap)
		return;
	while (s->cap < want)
		s->cap = s->cap ? s->cap * 2 : 4096;
	nb = realloc(s->buf, s->cap);
	if (!nb) {
		s->failed = 1;
		return;
	}
	s->buf = nb;
}

void agp_side_begin(struct agp_side *s, uint32_t type)
{
	struct agp_side_hdr h = { type, 0 };

	memset(s, 0, sizeof(*s));
	side_reserve(s, sizeof(h));
	if (s->failed)
		return;
	memcpy(s->buf, &h, sizeof(h));
	s->len = sizeof(h);
}

void agp_side_bytes(struct agp_side *s, uint16_t tag, const void *data, size_t len)
{
	struct agp_field f = { tag, 0, (uint32_t)len };
	size_t padded = (len + 7) & ~(size_t)7;

	side_reserve(s, sizeof(f) + padded);
	if (s->failed)
		return;
	memcpy(s->buf + s->len, &f, sizeof(f));
	if (len)
		memcpy(s->buf + s->len + sizeof(f), data, len);
	memset(s->buf + s->len + sizeof(f) + len, 0, padded - len);
	s->len += sizeof(f) + padded;
}

void agp_side_int(struct agp_side *s, uint16_t tag, int64_t v)
{
	agp_side_bytes(s, tag, &v, sizeof(v));
}

void agp_side_text(struct agp_side *s, uint16_t tag, const char *text)
{
	if (text)
		agp_side_bytes(s, tag, text, strlen(text));
}

void agp_side_end(struct agp_side *s)
{
	struct agp_side_hdr *h;
	size_t off = 0;

	if (!s->failed && s->buf && agp_proc.enabled && agp_proc.side_fd >= 0) {
		h = (struct agp_side_hdr *)s->buf;
		h->len = (uint32_t)(s->len - sizeof(*h));
		pthread_mutex_lock(&side_lock);
		/* Never write into a file of the workload's that reused our fd number. */
		if (!fd_is_ours(agp_proc.side_fd, agp_proc.side_dev, agp_proc.side_ino))
			off = s->len;
		while (off < s->len) {
			ssize_t n = write(agp_proc.side_fd, s->buf + off, s->len - off);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			off += (size_t)n;
		}
		pthread_mutex_unlock(&side_lock);
	}
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

int agp_safe_read(const void *p, void *out, size_t n)
{
	struct iovec local = { out, n }, remote = { (void *)p, n };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* GPU records from collector/gpu/ go through the side file. */

void gpu_emit_status(int on, const char *detail)
{
	struct agp_side s;

	agp_side_begin(&s, AGP_SIDE_GPU_STATUS);
	agp_side_int(&s, AGP_F_STATUS, on);
	agp_side_text(&s, AGP_F_DETAIL, detail);
	agp_side_end(&s);
}

void gpu_emit_activity(const struct gpu_activity_rec *r)
{
	struct agp_side s;

	agp_side_begin(&s, AGP_SIDE_GPU_ACTIVITY);
	agp_side_int(&s, AGP_F_GPU_KIND, r->kind);
	agp_side_int(&s, AGP_F_DEVICE, r->device);
	agp_side_int(&s, AGP_F_CONTEXT, r->context);
	agp_side_int(&s, AGP_F_STREAM, r->stream);
	agp_side_int(&s, AGP_F_START, (int64_t)r->start_ns);
	agp_side_int(&s, AGP_F_END, (int64_t)r->end_ns);
	agp_side_int(&s, AGP_F_CORR, r->correlation_id);
	agp_side_int(&s, AGP_F_GRID_X, r->grid[0]);
	agp_side_int(&s, AGP_F_GRID_Y, r->grid[1]);
	agp_side_int(&s, AGP_F_GRID_Z, r->grid[2]);
	agp_side_int(&s, AGP_F_BLOCK_X, r->block[0]);
	agp_side_int(&s, AGP_F_BLOCK_Y, r->block[1]);
	agp_side_int(&s, AGP_F_BLOCK_Z, r->block[2]);
	agp_side_int(&s, AGP_F_BYTES, (int64_t)r->bytes);
	agp_side_text(&s, AGP_F_NAME, r->name);
	agp_side_text(&s, AGP_F_COPY_KIND, r->copy_kind);
	agp_side_end(&s);
}

void gpu_emit_api_call(const struct gpu_api_rec *r)
{
	struct agp_side s;

	agp_side_begin(&s, AGP_SIDE_GPU_API);
	agp_side_int(&s, AGP_F_API, r->api);
	agp_side_int(&s, AGP_F_TID, r->tid);
	agp_side_int(&s, AGP_F_START, (int64_t)r->start_ns);
	agp_side_int(&s, AGP_F_END, (int64_t)r->end_ns);
	agp_side_int(&s, AGP_F_CORR, r->correlation_id);
	agp_side_int(&s, AGP_F_EXTERNAL, (int64_t)r->external_id);
	agp_side_text(&s, AGP_F_NAME, r->name);
	agp_side_end(&s);
}

/* Environment: take the launcher's variables out of the workload's sight. */

static void hide_launcher_environment(void)
{
	const char *shm = getenv(AGP_ENV_SHM);
	const char *orig = getenv(AGP_ENV_ORIG_PRELOAD);
	const char *pre = getenv("LD_PRELOAD");

	snprintf(agp_env_shm, sizeof(agp_env_shm), "%s", shm ? shm : "");
	/* the launcher puts the collector first: that entry is what every child gets prepended */
	snprintf(agp_env_preload, sizeof(agp_env_preload), "%.*s", pre ? (int)strcspn(pre, ": ") : 0,
		 pre ? pre : "");
	/* Children get them back through the exec hooks (hooks_proc.c). */
	if (orig && strcmp(orig, AGP_PRELOAD_UNSET) != 0)
		setenv("LD_PRELOAD", orig, 1);
	else
		unsetenv("LD_PRELOAD");
	unsetenv(AGP_ENV_SHM);
	unsetenv(AGP_ENV_ORIG_PRELOAD);
	/* Only the CUDA driver needs this one: it gets it through getenv (hooks_proc.c). */
	if (getenv(AGP_ENV_CUDA_INJECTION) && getenv("CUDA_INJECTION64_PATH")) {
		snprintf(agp_env_cuda, sizeof(agp_env_cuda), "%s", getenv("CUDA_INJECTION64_PATH"));
		unsetenv("CUDA_INJECTION64_PATH");
	}
	unsetenv(AGP_ENV_CUDA_INJECTION);
}

void agp_exit_record(int status)
{
	struct agp_side s;

	if (!agp_proc.enabled || agp_proc.pid != getpid())
		return;
	gpu_collector_flush();
	agp_tf_exit_check();
	agp_kernels_exit_check();
	agp_side_begin(&s, AGP_SIDE_EXIT);
	agp_side_int(&s, AGP_F_EXIT_STATUS, status);
	agp_side_int(&s, AGP_F_END, (int64_t)agp_now_ns());
	agp_side_end(&s);
	atomic_store(&agp_proc.shm->finished, 1);
}

static void on_exit_handler(int status, void *arg)
{
	(void)arg;
	agp_exit_record(status);
}

int agp_start(const char *dir)
{
	agp_proc.side_fd = -1;
	agp_proc.shm_fd = -1;
	snprintf(shm_dir, sizeof(shm_dir), "%s", dir);
	hide_launcher_environment();
	agp_py_read_overrides();
	agp_kernels_init();
	agp_capture_read_env();
	if (process_start() != 0) {
		agp_proc.enabled = 1;
		agp_disable("cannot create the recording buffers");
		return -1;
	}
	pthread_atfork(NULL, NULL, on_fork_child);
	on_exit(on_exit_handler, NULL);
	thread_key_init();
	agp_proc_hooks_init();
	agp_tf_init();
	gpu_collector_init();
	return 0;
}

/*
 * The late start (`import agprof; agprof.start()`, python/agprof): the
 * library is loaded into a running Python with ctypes (RTLD_LOCAL, the GIL
 * held, after TensorFlow may have been imported), so nothing is interposed:
 * the hooks are reached through the GOT slots got.c patches in TensorFlow's
 * objects, and the caller rescans after it imports more of them.  The
 * session directory is made and drained by a child `agprof __attach`.
 * Returns 0, 1 when already recording (attached or under `agprof run`),
 * 2 when the buffers cannot be created.
 */
AGP_EXPORT int agprof_attach(const char *dir)
{
	static int once;

	if (agp_proc.enabled)
		return 1;
	/* A previous session's buffers: hooks that were in flight at its stop have long finished. */
	release_buffers();
	snprintf(shm_dir, sizeof(shm_dir), "%s", dir);
	if (!once) {
		agp_py_read_overrides();
		agp_kernels_init();
		pthread_atfork(NULL, NULL, on_fork_child);
		on_exit(on_exit_handler, NULL);
		thread_key_init();
		once = 1;
	}
	if (process_start() != 0)
		return 2;
	agp_op_prices_reset();  /* a new stream: a previous attach's prices are in its own recording */
	/* The caller holds the GIL (ctypes.PyDLL): learn the frame layout now. */
	agp_py_discover_layout();
	agp_tf_attach();
	return 0;
}

/* TensorFlow objects loaded since the last scan get their GOT patched; returns the slots patched so far. */
AGP_EXPORT int agprof_attach_rescan(void)
{
	agp_got_scan();
	return agp_got_patched();
}

/* Slots of TensorFlow's objects that reach a hook (0: TensorFlow's calls are not seen). */
AGP_EXPORT int agprof_attach_bound(void)
{
	return agp_got_bound();
}

/*
 * End of an attached session: the process's record ends here (exit status
 * 0, TensorFlow's status) and the hooks stop recording; the mapping stays
 * until the next start, for a hook still writing on another thread.
 */
AGP_EXPORT int agprof_detach(void)
{
	if (!agp_proc.enabled)
		return 1;
	agp_exit_record(0);
	agp_proc.enabled = 0;
	return 0;
}

__attribute__((constructor)) static void agp_init(void)
{
	const char *dir = getenv(AGP_ENV_SHM);

	agp_proc.side_fd = -1;
	agp_proc.shm_fd = -1;
	if (dir && *dir)
		agp_start(dir);  /* else loaded outside `agprof run`: stay inert */
}
