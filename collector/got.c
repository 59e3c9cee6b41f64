/*
 * got.c - the fallback when symbol interposition does not reach a hook: the
 * importing module's GOT (or vtable) slot for a hooked function is rewritten
 * to point at the collector.
 *
 * Interposition fails when a TensorFlow module is loaded with RTLD_DEEPBIND
 * (its own dependencies are searched before the preloaded library), or when
 * a build binds calls inside one object.  After every dlopen, each newly
 * loaded object's relocations are read with libelf from its file; a
 * JUMP_SLOT, GLOB_DAT or absolute 64-bit relocation against a hooked symbol
 * whose slot does not already hold the collector's function is patched.
 * Rare path (dlopen): allocation, file I/O and mprotect are fine here.
 */
#include "collector.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct got_hook {
	const char *name;
	void *hook;
};

/* Filled by hooks_tf.c (agp_got_hooks). */
extern const struct got_hook agp_got_hooks[] AGP_HIDDEN;

#define MAX_SEEN 1024
static uintptr_t seen[MAX_SEEN];
static size_t nseen;
static pthread_mutex_t got_lock = PTHREAD_MUTEX_INITIALIZER;
static int patched_slots; /* slots this collector rewrote (agprof_attach_rescan reports them) */
static int bound_slots;   /* hooked slots found pointing at the collector, patched or not */

/* Called for every relocation of TensorFlow's objects (hundreds of thousands). */
static void *hook_for(const char *name)
{
	if (name[0] != 'T' && name[0] != '_')
		return NULL;
	for (const struct got_hook *h = agp_got_hooks; h->name; h++)
		if (h->name[1] == name[1] && h->name[2] == name[2] && !strcmp(h->name, name))
			return h->hook;
	return NULL;
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

static void patch_slot(void **slot, void *hook)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)slot & ~(uintptr_t)(page - 1);

	if (*slot == hook) {
		bound_slots++;
		return;  /* interposition already works for this reference */
	}
	if (mprotect((void *)start, (size_t)page * 2, PROT_READ | PROT_WRITE) != 0)
		return;
	__atomic_store_n(slot, hook, __ATOMIC_RELEASE);
	patched_slots++;
	bound_slots++;
	/* Leave it writable: the page may also hold data the module writes (RELRO is already past). */
}

/* Patch the hooked relocations of one relocation section. */
static void patch_section(Elf *elf, GElf_Shdr *shdr, Elf_Scn *scn, uintptr_t base)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	Elf_Scn *symscn = elf_getscn(elf, shdr->sh_link);
	GElf_Shdr symshdr;
	Elf_Data *symdata;
	size_t n;

	if (!data || !symscn || !gelf_getshdr(symscn, &symshdr) || !(symdata = elf_getdata(symscn, NULL)) ||
	    !shdr->sh_entsize)
		return;
	n = shdr->sh_size / shdr->sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Rela rela;
		GElf_Sym sym;
		const char *name;
		unsigned type;
		void *hook;

		if (!gelf_getrela(data, (int)i, &rela))
			continue;
		type = GELF_R_TYPE(rela.r_info);
		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT && type != R_X86_64_64)
			continue;
		if (!gelf_getsym(symdata, (int)GELF_R_SYM(rela.r_info), &sym))
			continue;
		name = elf_strptr(elf, symshdr.sh_link, sym.st_name);
		if (!name || !(hook = hook_for(name)))
			continue;
		/*
		 * Under --no-kernels a kernel hook's slot (the CPU device's
		 * vtable, in the object that defines the function) gets
		 * TensorFlow's own definition back: the pass-through would
		 * still cost a call per kernel.
		 */
		if (agp_kernel_hook_unwanted(hook) && sym.st_shndx != SHN_UNDEF && sym.st_value)
			hook = (void *)(base + sym.st_value);
		patch_slot((void **)(base + rela.r_offset), hook);
	}
}

static void scan_object(const char *path, uintptr_t base)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	Elf_Scn *scn = NULL;

	if (fd < 0)
		return;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;

		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_RELA && shdr.sh_link)
			patch_section(elf, &shdr, scn, base);
	}
	if (elf)
		elf_end(elf);
	close(fd);
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
		scan_object(info->dlpi_name, (uintptr_t)info->dlpi_addr);
	return 0;
}

/* Scan the TensorFlow objects loaded since the last scan. */
void agp_got_scan(void) AGP_HIDDEN;
void agp_got_scan(void)
{
	static int elf_ready;

	if (!agp_proc.enabled)
		return;
	pthread_mutex_lock(&got_lock);
	if (!elf_ready) {
		const char *off = getenv(AGP_ENV_NO_GOT_PATCH);

		/* The user's escape hatch, should patching ever conflict with another tool. */
		elf_ready = off && *off && strcmp(off, "0") ? -1 : elf_version(EV_CURRENT) != EV_NONE ? 1 : -1;
	}
	if (elf_ready > 0)
		dl_iterate_phdr(scan_cb, NULL);
	pthread_mutex_unlock(&got_lock);
}

/* Slots of TensorFlow's objects that reach a hook: the hooks are in place. */
int agp_got_bound(void) AGP_HIDDEN;
int agp_got_bound(void)
{
	return bound_slots;
}

int agp_got_patched(void) AGP_HIDDEN;
int agp_got_patched(void)
{
	return patched_slots;
}

void *agp_real_dlopen(const char *file, int mode) AGP_HIDDEN;
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
