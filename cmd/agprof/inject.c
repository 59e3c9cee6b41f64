/*
 * inject.c - queue a line of Python in a running process through ptrace.
 *
 * gdb's infcalls would do (memray uses them), but gdb 13 cannot write the
 * x86 extended state back on recent kernels ("Couldn't write extended
 * state status") and then corrupts an interrupted system call; we need two
 * plain calls, so we make them ourselves (docs/collector.md):
 *   PTRACE_SEIZE + PTRACE_INTERRUPT (no SIGSTOP: the process can never be
 *   left in a group stop), save all registers, call mmap() for a page,
 *   copy the code there, call Py_AddPendingCall(PyRun_SimpleString, page),
 *   restore the registers, detach.  Each call returns to address 0; the
 *   fault stops it and is discarded.  Python runs the code in its main
 *   thread at its next check of the eval loop, with the GIL: never inside
 *   whatever the thread was doing when interrupted.
 */
#include "inject.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define XSTATE_MAX 16384
#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202
#endif

struct saved_regs {
	struct user_regs_struct gp;
	unsigned char xstate[XSTATE_MAX];
	struct iovec xiov;
	struct user_fpregs_struct fp;
	int have_xstate;
};

int inject_find_python(pid_t pid, char *out, size_t len)
{
	char maps[64], line[4096], path[4096];
	int found = 0;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(maps, "re")))
		return INJECT_NO_PROCESS;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %*s %*s %*s %*s %4095s", path) == 1 && path[0] == '/' &&
		    strstr(strrchr(path, '/'), "python")) {
			snprintf(out, len, "%s", path);
			found = 1;
		}
	fclose(f);
	return found ? INJECT_OK : INJECT_NOT_PYTHON;
}

#if defined(__x86_64__)
static int symbol_in_file(const char *path, const char *name, uint64_t *value, uint64_t *min_vaddr)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	Elf64_Phdr ph;

	*min_vaddr = UINT64_MAX;
	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum > 4096)
		goto out;
	for (int i = 0; i < eh.e_phnum; i++)
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + (off_t)i * eh.e_phentsize) == sizeof(ph) &&
		    ph.p_type == PT_LOAD && ph.p_vaddr < *min_vaddr)
			*min_vaddr = ph.p_vaddr & ~(uint64_t)0xfff;
	if (eh.e_type == ET_EXEC)
		*min_vaddr = UINT64_MAX;  /* absolute addresses: no load base */
	sh = calloc(eh.e_shnum, sizeof(*sh));
	if (!sh || pread(fd, sh, eh.e_shnum * sizeof(*sh), eh.e_shoff) != (ssize_t)(eh.e_shnum * sizeof(*sh)))
		goto out;
	for (int i = 0; i < eh.e_shnum && !found; i++) {
		Elf64_Shdr *st = &sh[i];
		size_t n = st->sh_entsize ? st->sh_size / st->sh_entsize : 0, len = strlen(name);

		if (st->sh_type != SHT_DYNSYM || st->sh_link >= eh.e_shnum || st->sh_entsize != sizeof(Elf64_Sym))
			continue;
		for (size_t k = 0; k < n && !found; k++) {
			Elf64_Sym sym;
			char buf[64];

			if (pread(fd, &sym, sizeof(sym), st->sh_offset + k * sizeof(sym)) != sizeof(sym) ||
			    sym.st_shndx == SHN_UNDEF || !sym.st_value || sym.st_name >= sh[st->sh_link].sh_size)
				continue;
			if (pread(fd, buf, len + 1, sh[st->sh_link].sh_offset + sym.st_name) == (ssize_t)len + 1 &&
			    !memcmp(buf, name, len + 1)) {
				*value = sym.st_value;
				found = 1;
			}
		}
	}
out:
	free(sh);
	close(fd);
	return found;
}

/* The address of `name` in pid, looked for in the mapped files whose basename contains `lib`. */
static uint64_t remote_symbol(pid_t pid, const char *lib, const char *name)
{
	char maps[64], line[4096], path[4096];
	uint64_t addr = 0;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(maps, "re")))
		return 0;
	while (!addr && fgets(line, sizeof(line), f)) {
		unsigned long start, off;
		uint64_t value, min_vaddr;
		const char *base;

		if (sscanf(line, "%lx-%*x %*s %lx %*s %*s %4095s", &start, &off, path) != 3 || off != 0 ||
		    path[0] != '/')
			continue;
		base = strrchr(path, '/') + 1;
		if (!strstr(base, lib) || !symbol_in_file(path, name, &value, &min_vaddr))
			continue;
		addr = min_vaddr == UINT64_MAX ? value : start - min_vaddr + value;
	}
	fclose(f);
	return addr;
}

/* Wait for pid's next stop, up to 5 s: its stop signal, 0 when it exited or the wait failed. */
static int wait_stop(pid_t pid, int *status)
{
	for (int i = 0; i < 5000; i++) {
		pid_t r = waitpid(pid, status, __WALL | WNOHANG);

		if (r == pid)
			return WIFSTOPPED(*status) ? WSTOPSIG(*status) : 0;
		if (r < 0 && errno != EINTR)
			return 0;
		usleep(1000);
	}
	return 0;
}

static int save_regs(pid_t pid, struct saved_regs *s)
{
	if (ptrace(PTRACE_GETREGS, pid, NULL, &s->gp) != 0)
		return -1;
	s->xiov.iov_base = s->xstate;
	s->xiov.iov_len = sizeof(s->xstate);
	s->have_xstate = ptrace(PTRACE_GETREGSET, pid, (void *)NT_X86_XSTATE, &s->xiov) == 0;
	return s->have_xstate || ptrace(PTRACE_GETFPREGS, pid, NULL, &s->fp) == 0 ? 0 : -1;
}

static int restore_regs(pid_t pid, struct saved_regs *s)
{
	int fp = s->have_xstate ? ptrace(PTRACE_SETREGSET, pid, (void *)NT_X86_XSTATE, &s->xiov)
				: ptrace(PTRACE_SETFPREGS, pid, NULL, &s->fp);

	return ptrace(PTRACE_SETREGS, pid, NULL, &s->gp) == 0 && fp == 0 ? 0 : -1;
}

/*
 * fn(a0, a1, a2, a3, a4, a5) in pid, stopped; its return value in *ret.
 * Below the red zone, 16-byte aligned, a return address of 0: the fault
 * there is our "call returned".  Signals meanwhile go to the program.
 */
static int remote_call(pid_t pid, const struct saved_regs *s, uint64_t fn, const uint64_t a[6], uint64_t *ret)
{
	struct user_regs_struct r = s->gp;
	int status, sig, n = 0;

	r.rsp = ((r.rsp - 256) & ~(uint64_t)15) - 8;
	if (ptrace(PTRACE_POKEDATA, pid, (void *)r.rsp, NULL) != 0)
		return -1;
	r.rip = fn;
	r.rdi = a[0], r.rsi = a[1], r.rdx = a[2], r.rcx = a[3], r.r8 = a[4], r.r9 = a[5];
	r.rax = 0;
	r.orig_rax = (uint64_t)-1;  /* no system-call restart on our way in */
	if (ptrace(PTRACE_SETREGS, pid, NULL, &r) != 0 || ptrace(PTRACE_CONT, pid, NULL, NULL) != 0)
		return -1;
	while (n++ < 64 && (sig = wait_stop(pid, &status)) != 0) {
		if (sig == SIGSEGV && ptrace(PTRACE_GETREGS, pid, NULL, &r) == 0 && r.rip == 0) {
			*ret = r.rax;
			return 0;
		}
		if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)(sig == SIGSEGV || sig == SIGTRAP ? 0 : sig)) != 0)
			return -1;
	}
	return -1;
}

/* In pid, stopped: a page with code in it, then Py_AddPendingCall(PyRun_SimpleString, page). */
static int queue_code(pid_t pid, const struct saved_regs *s, const uint64_t fns[3], const char *code,
		      char *err, size_t errlen)
{
	size_t len = strlen(code) + 1, size = (len + 4095) & ~(size_t)4095;
	uint64_t a[6] = { 0, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0 };
	uint64_t page = 0, rc = 0;
	struct iovec local = { (void *)code, len }, remote;

	if (remote_call(pid, s, fns[0], a, &page) != 0 || page == (uint64_t)MAP_FAILED || !page) {
		snprintf(err, errlen, "cannot map a page in the process (mmap)");
		return INJECT_FAILED;
	}
	remote.iov_base = (void *)page;
	remote.iov_len = len;
	if (process_vm_writev(pid, &local, 1, &remote, 1, 0) != (ssize_t)len) {
		snprintf(err, errlen, "cannot write into the process: %s", strerror(errno));
		return INJECT_FAILED;
	}
	a[0] = fns[2], a[1] = page;
	if (remote_call(pid, s, fns[1], a, &rc) != 0 || (int)rc != 0) {
		snprintf(err, errlen, "Py_AddPendingCall failed in the process (its queue is full?)");
		return INJECT_FAILED;
	}
	return INJECT_OK;
}

/* The whole injection, in the child: seize, interrupt, two calls, restore, detach. */
static int inject_now(pid_t pid, const char *code, char *err, size_t errlen)
{
	static struct saved_regs s;
	uint64_t fns[3] = { remote_symbol(pid, "libc", "mmap"), remote_symbol(pid, "python", "Py_AddPendingCall"),
			    remote_symbol(pid, "python", "PyRun_SimpleString") };
	int status, rc;

	if (!fns[1] || !fns[2] || !fns[0]) {
		snprintf(err, errlen, "no %s in the process's libraries: an unsupported Python",
			 !fns[0] ? "mmap" : !fns[1] ? "Py_AddPendingCall" : "PyRun_SimpleString");
		return INJECT_UNSUPPORTED;
	}
	if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) != 0) {
		snprintf(err, errlen, "ptrace: %s", strerror(errno));
		return errno == ESRCH ? INJECT_NO_PROCESS : INJECT_NOT_PERMITTED;
	}
	if (ptrace(PTRACE_INTERRUPT, pid, NULL, NULL) != 0 || !wait_stop(pid, &status)) {
		snprintf(err, errlen, "the process exited");
		return INJECT_NO_PROCESS;
	}
	if (save_regs(pid, &s) != 0) {
		snprintf(err, errlen, "cannot read the registers: %s", strerror(errno));
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
		return INJECT_FAILED;
	}
	rc = queue_code(pid, &s, fns, code, err, errlen);
	if (restore_regs(pid, &s) != 0 && rc == INJECT_OK) {
		snprintf(err, errlen, "cannot restore the registers: %s", strerror(errno));
		rc = INJECT_FAILED;
	}
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return rc;
}

#else /* the call sequence below is x86-64's (SysV ABI, user_regs_struct) */
static int inject_now(pid_t pid, const char *code, char *err, size_t errlen)
{
	(void)pid, (void)code;
	snprintf(err, errlen, "attaching is implemented for x86-64 only");
	return INJECT_UNSUPPORTED;
}
#endif

int inject_python(pid_t pid, const char *code, char *err, size_t errlen)
{
	int fds[2], status, rc = INJECT_FAILED;
	char msg[512] = "";
	pid_t child;
	ssize_t n;

	if (pipe(fds) != 0 || (child = fork()) < 0) {
		snprintf(err, errlen, "cannot fork: %s", strerror(errno));
		return INJECT_FAILED;
	}
	if (child == 0) {
		/* Our own session: a Ctrl-C or kill -9 of agprof does not stop it midway. */
		setsid();
		signal(SIGPIPE, SIG_IGN);
		close(fds[0]);
		msg[0] = (char)inject_now(pid, code, msg + 1, sizeof(msg) - 1);
		if (write(fds[1], msg, strlen(msg + 1) + 2) < 0)
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	n = read(fds[0], msg, sizeof(msg) - 1);
	close(fds[0]);
	waitpid(child, &status, 0);
	if (n >= 1) {
		msg[n] = '\0';
		rc = msg[0];
		snprintf(err, errlen, "%s", msg + 1);
	} else {
		snprintf(err, errlen, "the injector process died");
	}
	return rc;
}
