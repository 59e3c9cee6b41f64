/*
 * inject.h - run one line of Python in another, running process
 * (`agprof attach PID`, attach_pid.c), with ptrace and no debugger.
 */
#ifndef AGPROF_INJECT_H
#define AGPROF_INJECT_H

#include <stddef.h>
#include <sys/types.h>

enum inject_result {
	INJECT_OK = 0,
	INJECT_NO_PROCESS,   /* no such process, or it exited during the injection */
	INJECT_NOT_PERMITTED,/* ptrace refused (another user, Yama, no CAP_SYS_PTRACE) */
	INJECT_NOT_PYTHON,   /* no python executable or libpython mapped */
	INJECT_UNSUPPORTED,  /* a Python without the entry points we call */
	INJECT_FAILED,       /* the call failed inside the process */
};

/* A mapped file whose name contains "python" (executable or libpython): INJECT_OK or INJECT_NOT_PYTHON. */
int inject_find_python(pid_t pid, char *path, size_t len);

/*
 * Queue `code` to run in pid's main thread at its next safe point
 * (Py_AddPendingCall(PyRun_SimpleString, copy of code)); the process is
 * stopped only for the two calls, a few microseconds.  The work runs in a
 * child that outlives us, so a kill -9 of agprof cannot cut it in half.
 */
int inject_python(pid_t pid, const char *code, char *err, size_t errlen);

#endif
