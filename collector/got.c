/*
 * got.c - the fallback when symbol interposition does not reach a hook: the
 * importing module's GOT (or vtable) slot for a hooked function is rewritten
 * to point at the collector.
 *
 * Interposition fails when a TensorFlow module is loaded with RTLD_DEEPBIND
 * (its own dependencies are searched before the preloaded library), or when
 * a build binds calls inside one object.  After every dlopen, each newly
 * loaded object's dynamic relocations are read from its loaded image; a
 * JUMP_SLOT, GLOB_DAT or absolute 64-bit relocation against a hooked symbol
 * whose slot does not already hold the collector's function is patched.
 * Rare path (dlopen): allocation and mprotect are fine here.  A slot that
 * cannot be made writable is remembered: the recording says which calls
 * never reach their hook (agp_got_unpatched).
 */
#include "collector.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_SEEN 1024
static uintptr_t seen[MAX_SEEN];
static size_t nseen;
static pthread_mutex_t got_lock = PTHREAD_MUTEX_INITIALIZER;
static int patched_slots; /* slots this collector rewrote (agprof_attach_rescan reports them) */
static int bound_slots;   /* hooked slots found pointing at the collector, patched or not */
static uint32_t unpatched_hooks;   /* bit k: a slot of agp_got_hooks[k] could not be made writable */
static char unpatched_object[256]; /* the object of the first such slot, set before its bit */
static int unpatched_more;         /* another object had such a slot too */

/* 1 + the index in agp_got_hooks of the hook for symbol name, 0 when none (asked for thousands of imports). */
static uint8_t hook_index(const char *name)
{
	if (name[0] != 'T' && name[0] != '_')
		return 0;
	for (int k = 0; agp_got_hooks[k].name; k++)
		if (agp_got_hooks[k].name[1] == name[1] && agp_got_hooks[k].name[2] == name[2] &&
		    !strcmp(agp_got_hooks[k].name, name))
			return (uint8_t)(k + 1);
	return 0;
}

static int already_seen(uintptr_t base)
{
	for (size_t i = 0; i < nseen; i++)
		if (seen[i] == base)
			return 1;
	if (nseen < MAX_SEEN)
		seen[nseen++] = base;
	return 0;
}

/* The slot of hook k in object could not be patched: say so at the session's end (agp_got_unpatched). */
static void unpatched(int k, const char *object)
{
	const char *base = strrchr(object, '/');

	base = base ? base + 1 : object;
	if (!unpatched_object[0])
		snprintf(unpatched_object, sizeof(unpatched_object), "%s", base);
	else if (strncmp(unpatched_object, base, sizeof(unpatched_object) - 1))
		unpatched_more = 1;
	if (k < 32)
		__atomic_or_fetch(&unpatched_hooks, 1u << k, __ATOMIC_RELEASE);
}

/*
 * Point slot at agp_got_hooks[k]'s hook (or at hook, its stand-in).  Only
 * the slot's own page is made writable: asking for the next page too made
 * mprotect fail (ENOMEM) whenever that page was not mapped, as after an
 * object's last page when nothing was mapped right above it (it depends on
 * what the process mapped and unmapped before).  _pywrap_tf_session.so's
 * slots of TF_NewGraph, TF_DeleteGraph and TF_NewOperation lie in its last
 * page: such a process recorded no trace at all after agprof.start().
 */
static void patch_slot(void **slot, void *hook, int k, const char *object)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)slot & ~(page - 1), end = ((uintptr_t)(slot + 1) + page - 1) & ~(page - 1);

	if (*slot == hook) {
		bound_slots++;
		return;  /* interposition already works for this reference */
	}
	if (mprotect((void *)start, end - start, PROT_READ | PROT_WRITE) != 0) {
		unpatched(k, object);
		return;
	}
	__atomic_store_n(slot, hook, __ATOMIC_RELEASE);
	patched_slots++;
	bound_slots++;
	/* Leave it writable: the page may also hold data the module writes (RELRO is already past). */
}

/*
 * An object's dynamic tables, read from its loaded image: ld.so relocated
 * the object from these very tables, so they are mapped, and reading them
 * costs no file I/O (libtensorflow_cc.so.2 is 750 MB; its relocation and
 * symbol tables alone are 40 MB that libelf read and copied at every
 * start-up: most of what the collector added to it).
 */
struct dyn_tables {
	const ElfW(Sym) *symtab;
	const char *strtab;
	size_t strsz;
	const uint32_t *gnu_hash;    /* DT_GNU_HASH, or NULL */
	const uint32_t *sysv_hash;   /* DT_HASH, or NULL */
	const ElfW(Rela) *rela, *jmprel;
	size_t nrela, njmprel, nrelative;
};

/* A d_ptr of the dynamic section: glibc adjusts some in place by the load address, others stay offsets. */
static const void *dyn_ptr(uintptr_t base, ElfW(Addr) v)
{
	return (const void *)(v >= base ? v : base + v);
}

static int dyn_tables_read(const struct dl_phdr_info *info, struct dyn_tables *d)
{
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t base = (uintptr_t)info->dlpi_addr;

	memset(d, 0, sizeof(*d));
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(base + info->dlpi_phdr[i].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB: d->symtab = dyn_ptr(base, dyn->d_un.d_ptr); break;
		case DT_STRTAB: d->strtab = dyn_ptr(base, dyn->d_un.d_ptr); break;
		case DT_STRSZ: d->strsz = dyn->d_un.d_val; break;
		case DT_GNU_HASH: d->gnu_hash = dyn_ptr(base, dyn->d_un.d_ptr); break;
		case DT_HASH: d->sysv_hash = dyn_ptr(base, dyn->d_un.d_ptr); break;
		case DT_RELA: d->rela = dyn_ptr(base, dyn->d_un.d_ptr); break;
		case DT_RELASZ: d->nrela = dyn->d_un.d_val / sizeof(ElfW(Rela)); break;
		case DT_RELACOUNT: d->nrelative = dyn->d_un.d_val; break;
		case DT_JMPREL: d->jmprel = dyn_ptr(base, dyn->d_un.d_ptr); break;
		case DT_PLTRELSZ: d->njmprel = dyn->d_un.d_val / sizeof(ElfW(Rela)); break;
		case DT_PLTREL: if (dyn->d_un.d_val != DT_RELA) return -1; break;
		}
	}
	if (!d->symtab || !d->strtab || (!d->gnu_hash && !d->sysv_hash))
		return -1;
	if (d->nrelative > d->nrela)
		d->nrelative = d->nrela;
	/* Some linkers count the PLT's relocations in DT_RELASZ too: scan them once. */
	if (d->jmprel >= d->rela && d->jmprel < d->rela + d->nrela)
		d->njmprel = 0;
	return 0;
}

static const char *sym_name(const struct dyn_tables *d, uint32_t i)
{
	uint32_t off = d->symtab[i].st_name;

	return off < d->strsz ? d->strtab + off : NULL;
}

/*
 * How many symbols .dynsym holds (ELF does not say), and how many come
 * before the hashed ones: DT_GNU_HASH leaves the undefined symbols (the
 * imports) out of its table, before symoffset; DT_HASH hashes them all.
 */
static uint32_t dyn_nsyms(const struct dyn_tables *d, uint32_t *unhashed)
{
	const uint32_t *h = d->gnu_hash, *buckets, *chains;
	uint32_t nbuckets, symoffset, last = 0;

	if (!h) {
		*unhashed = d->sysv_hash[1];
		return d->sysv_hash[1];
	}
	nbuckets = h[0];
	symoffset = h[1];
	buckets = h + 4 + h[2] * (sizeof(ElfW(Addr)) / 4);
	chains = buckets + nbuckets;
	*unhashed = symoffset;
	for (uint32_t b = 0; b < nbuckets; b++)
		if (buckets[b] > last)
			last = buckets[b];
	if (last < symoffset)
		return symoffset;
	while (!(chains[last - symoffset] & 1))
		last++;
	return last + 1;
}

/* Mark every hashed symbol named name (a name can have several versions) with verdict v. */
static void gnu_mark(const struct dyn_tables *d, const char *name, uint8_t v, uint8_t *verdict)
{
	const uint32_t *h = d->gnu_hash, *buckets, *chains;
	uint32_t hash = 5381, nbuckets = h[0], symoffset = h[1];

	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		hash = hash * 33 + *c;
	buckets = h + 4 + h[2] * (sizeof(ElfW(Addr)) / 4);
	chains = buckets + nbuckets;
	for (uint32_t i = buckets[hash % nbuckets]; i && i >= symoffset; i++) {
		const char *s;

		if ((chains[i - symoffset] | 1) == (hash | 1) && (s = sym_name(d, i)) && !strcmp(s, name))
			verdict[i] = v;
		if (chains[i - symoffset] & 1)
			break;
	}
}

/*
 * verdict[i]: 1 + the index in agp_got_hooks of symbol i's hook, 0 for the
 * others.  The unhashed symbols (imports: ten thousand in
 * libtensorflow_cc.so.2) are compared by name, the hashed ones (400,000
 * there) looked up by each hook's name.  NULL when there is no table.
 */
static uint8_t *hook_verdicts(const struct dyn_tables *d, uint32_t *nsyms)
{
	uint32_t unhashed, n = dyn_nsyms(d, &unhashed);
	uint8_t *verdict = calloc(n ? n : 1, 1);

	if (!verdict)
		return NULL;
	for (uint32_t i = 0; i < unhashed && i < n; i++) {
		const char *name = sym_name(d, i);

		verdict[i] = name ? hook_index(name) : 0;
	}
	if (d->gnu_hash)
		for (int k = 0; agp_got_hooks[k].name; k++)
			gnu_mark(d, agp_got_hooks[k].name, (uint8_t)(k + 1), verdict);
	*nsyms = n;
	return verdict;
}

/* Patch the hooked JUMP_SLOT, GLOB_DAT and absolute relocations among n. */
static void patch_relocations(const struct dyn_tables *d, const ElfW(Rela) *rel, size_t n, const uint8_t *verdict,
			      uint32_t nsyms, uintptr_t base, const char *object)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t type = ELF64_R_TYPE(rel[i].r_info), sym = ELF64_R_SYM(rel[i].r_info);
		void *hook;

		if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT && type != R_X86_64_64) || sym >= nsyms ||
		    !verdict[sym])
			continue;
		hook = agp_got_hooks[verdict[sym] - 1].hook;
		/*
		 * Under --no-kernels a kernel hook's slot (the CPU device's
		 * vtable, in the object that defines the function) gets
		 * TensorFlow's own definition back: the pass-through would
		 * still cost a call per kernel.
		 */
		if (agp_kernel_hook_unwanted(hook) && d->symtab[sym].st_shndx != SHN_UNDEF && d->symtab[sym].st_value)
			hook = (void *)(base + d->symtab[sym].st_value);
		patch_slot((void **)(base + rel[i].r_offset), hook, verdict[sym] - 1, object);
	}
}

static void scan_object(const struct dl_phdr_info *info)
{
	struct dyn_tables d;
	uint8_t *verdict;
	uint32_t nsyms = 0;
	uintptr_t base = (uintptr_t)info->dlpi_addr;

	if (dyn_tables_read(info, &d) != 0 || !(verdict = hook_verdicts(&d, &nsyms)))
		return;
	/* The leading DT_RELACOUNT relocations are R_X86_64_RELATIVE: no symbol. */
	if (d.rela)
		patch_relocations(&d, d.rela + d.nrelative, d.nrela - d.nrelative, verdict, nsyms, base, info->dlpi_name);
	if (d.jmprel)
		patch_relocations(&d, d.jmprel, d.njmprel, verdict, nsyms, base, info->dlpi_name);
	free(verdict);
}

static int is_tensorflow_object(const char *path)
{
	return strstr(path, "tensorflow") != NULL;
}

static int scan_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	if (!info->dlpi_name || !info->dlpi_name[0] || !is_tensorflow_object(info->dlpi_name))
		return 0;
	if (!already_seen((uintptr_t)info->dlpi_addr))
		scan_object(info);
	return 0;
}

/* Scan the TensorFlow objects loaded since the last scan. */
void agp_got_scan(void)
{
	static int patch_on;

	if (!agp_proc.enabled)
		return;
	pthread_mutex_lock(&got_lock);
	if (!patch_on) {
		const char *off = getenv(AGP_ENV_NO_GOT_PATCH);

		/* The user's escape hatch, should patching ever conflict with another tool. */
		patch_on = off && *off && strcmp(off, "0") ? -1 : 1;
	}
	if (patch_on > 0)
		dl_iterate_phdr(scan_cb, NULL);
	pthread_mutex_unlock(&got_lock);
}

/* Slots of TensorFlow's objects that reach a hook: the hooks are in place. */
int agp_got_bound(void)
{
	return bound_slots;
}

int agp_got_patched(void)
{
	return patched_slots;
}

/*
 * What the slots that could not be patched cost, as one line for the
 * recording (meta.incomplete) in buf; 0 when every slot was patched.
 * Lock-free: it runs at exit, maybe while another thread scans.
 */
int agp_got_unpatched(char *buf, size_t size)
{
	uint32_t bits = __atomic_load_n(&unpatched_hooks, __ATOMIC_ACQUIRE);
	const char *last = NULL;
	size_t len;

	if (!bits || size < 2)
		return 0;
	len = (size_t)snprintf(buf, size, "%s's%s calls that record", unpatched_object,
			       unpatched_more ? " (and other objects')" : "");
	for (int k = 0; agp_got_hooks[k].name && k < 32 && len < size; k++) {
		if (!(bits & (1u << k)) || (last && !strcmp(last, agp_got_hooks[k].records)))
			continue;
		len += (size_t)snprintf(buf + len, size - len, "%s %s", last ? "," : "", agp_got_hooks[k].records);
		last = agp_got_hooks[k].records;
	}
	if (len < size)
		snprintf(buf + len, size - len, " do not reach agprof (their GOT slots could not be made writable):"
			 " those are missing");
	return 1;
}

void *agp_real_dlopen(const char *file, int mode)
{
	static void *(*real_dlopen)(const char *, int);

	if (!real_dlopen)
		real_dlopen = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	return real_dlopen(file, mode);
}

/* Python imports TensorFlow's modules with dlopen: check each new one's GOT. */
AGP_EXPORT void *dlopen(const char *file, int mode)
{
	void *h = agp_real_dlopen(file, mode);

	if (h && file && !(mode & RTLD_NOLOAD) && agp_proc.enabled && strstr(file, "tensorflow"))
		agp_got_scan();
	return h;
}
