/*
 * test-got.c - got.c patches a TensorFlow object's slot wherever the slot
 * lies, and a slot it cannot patch is named in the recording.
 *
 * The first test is the flake of issue 47's note: mprotect was asked for
 * the slot's page and the next one, and failed whenever nothing was mapped
 * after an object's last page; _pywrap_tf_session.so keeps its TF_NewGraph
 * slot there, so agprof.start() then recorded no trace in the whole process
 * (one run in four on a loaded machine).  Here the fixture object
 * (got-fixture.c) is loaded with nothing mapped after it, every time.
 */
#include "../../collector/collector.h"
#include "../../writer/run_writer.h"

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct TF_Graph *TF_NewGraph(void);  /* the hook (hooks_tf.c) */

#define WRITER_FIXTURE_DIR "/tmp/agprof-got-XXXXXX"
#include "writer_fixture.h"

static uintptr_t page_size(void)
{
	return (uintptr_t)sysconf(_SC_PAGESIZE);
}

static int is_mapped(uintptr_t addr)
{
	unsigned char v;

	return mincore((void *)addr, page_size(), &v) == 0;
}

enum { MAX_FILLERS = 256 };
static struct { uintptr_t start; size_t len; } fillers[MAX_FILLERS];
static size_t nfillers;

/*
 * Fill the holes among the shared-library mappings (gaps under 1 GiB: not
 * the space below them, nor the gap under the stack) with inaccessible
 * mappings, so that the next mapping goes right below the lowest of them.
 */
static void fill_holes(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long prev_end = 0, a, b;

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f) && nfillers < MAX_FILLERS) {
		if (sscanf(line, "%lx-%lx", &a, &b) != 2)
			continue;
		if (prev_end && a > prev_end && a - prev_end < (1UL << 30) &&
		    mmap((void *)prev_end, a - prev_end, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			 -1, 0) == (void *)prev_end) {
			fillers[nfillers].start = prev_end;
			fillers[nfillers++].len = a - prev_end;
		}
		prev_end = b;
	}
	fclose(f);
}

static void unfill_holes(void)
{
	for (size_t i = 0; i < nfillers; i++)
		munmap((void *)fillers[i].start, fillers[i].len);
	nfillers = 0;
}

/* The end of the fixture's last page. */
static int fixture_end(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t *end = data;

	(void)size;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libtensorflow_got_fixture.so"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t e = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + page_size() - 1) & ~(page_size() - 1);

		if (ph->p_type == PT_LOAD && e > *end)
			*end = e;
	}
	return 1;
}

/*
 * Load the fixture with no scan (agp_real_dlopen, not the dlopen hook) and
 * nothing mapped after its last page: a guard page goes right below the
 * lowest library, the fixture right below the guard, then the guard goes.
 * Its slot: the fixture's pointer to TF_NewGraph (0: not yet patched).
 */
static void **load_fixture_last(void)
{
	void *guard, *h;
	uintptr_t end = 0;
	void **slot;

	fill_holes();
	guard = mmap(NULL, page_size(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(guard, MAP_FAILED);
	h = agp_real_dlopen(FIXTURE_PATH, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(h, "%s", dlerror());
	dl_iterate_phdr(fixture_end, &end);
	unfill_holes();
	cr_assert_eq(end, (uintptr_t)guard, "the fixture does not end at the guard page: %#lx, %p",
		     (unsigned long)end, guard);
	munmap(guard, page_size());
	slot = dlsym(h, "fixture_new_graph");
	cr_assert_not_null(slot);
	cr_assert_eq((uintptr_t)slot & ~(page_size() - 1), end - page_size(), "the slot is not in the last page");
	cr_assert(!is_mapped(end), "a page is mapped after the fixture");
	cr_assert_null(*slot, "the hook is already bound");
	return slot;
}

Test(got, patches_a_slot_in_the_last_page, .init = start, .fini = remove_files)
{
	void **slot = load_fixture_last();
	char note[1024];

	agp_got_scan();
	cr_assert_eq(*slot, (void *)TF_NewGraph, "the slot was not patched");
	cr_assert_eq(agp_got_unpatched(note, sizeof(note)), 0);
}

/*
 * A slot that cannot be made writable (its page here a read-only shared
 * mapping of a file: mprotect says EACCES) is named in meta.incomplete.
 */
Test(got, names_a_slot_it_cannot_patch, .init = start, .fini = remove_files)
{
	void *h = agp_real_dlopen(FIXTURE_PATH, RTLD_NOW | RTLD_LOCAL), *page;
	char path[600], note[1024];
	void **slot;
	int fd;
	struct run_session sess;
	struct run_totals totals;
	char *argv[] = { "test", NULL };
	sqlite3 *db;
	sqlite3_stmt *st;

	cr_assert_not_null(h, "%s", dlerror());
	slot = dlsym(h, "fixture_new_graph");
	cr_assert_not_null(slot);
	page = (void *)((uintptr_t)slot & ~(page_size() - 1));
	snprintf(path, sizeof(path), "%s/page", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	cr_assert_eq(write(fd, page, page_size()), (ssize_t)page_size());
	close(fd);
	fd = open(path, O_RDONLY);
	cr_assert_eq(mmap(page, page_size(), PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0), page);

	agp_got_scan();
	cr_assert_null(*slot);
	/* writable again (a private copy): the fixture's .bss shares the page, and its destructors write it */
	cr_assert_eq(mmap(page, page_size(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0), page);
	close(fd);
	cr_assert_eq(agp_got_unpatched(note, sizeof(note)), 1);
	cr_assert(strstr(note, "libtensorflow_got_fixture.so's calls that record traces do not reach agprof"), "%s",
		  note);

	agp_exit_record(0);
	memset(&sess, 0, sizeof(sess));
	sess.argv = argv;
	sess.cwd = "/";
	sess.main_pid = getpid();
	sess.end_ns = agp_now_ns();
	cr_assert_eq(run_writer_finish(writer, &sess, &totals), 0);
	cr_assert(strstr(totals.note, "traces do not reach agprof"), "%s", totals.note);
	cr_assert_eq(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'incomplete'", -1, &st, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	cr_assert(strstr((const char *)sqlite3_column_text(st, 0), "libtensorflow_got_fixture.so's calls that record traces"));
	sqlite3_finalize(st);
	sqlite3_close(db);
}
