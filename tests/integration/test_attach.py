"""agprof attach PID (issue 38) on a real TensorFlow job started without agprof.

window: `attach --duration 4` records the traces and eager ops the job's own
  counters (TF's tracing count, its eager-op counter, printed every 50 ms on
  the recording's clock) say happened in the window, within the 50 ms
  edges; the job ends with its usual output and exit 0.
again: attach, detach, attach again (two recordings, both with traces); a third
  attach until Ctrl-C while a fourth is refused (exit 8: already recording).
errors: a non-Python process (sleep), a PID that does not exist, a Python
  without TensorFlow; one line each and their exit codes.
exit: --wait-tf on a program importing TensorFlow late, recorded to its exit.
kill: kill -9 of agprof at several moments of an attach; the job still
  ends with exit 0 and its full output.
hostile: a program that forges its status file (escape sequences, line
  breaks, init named as its writer, never answering the stop): one clean
  error line, within bounds.
"""
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time

import agtest

TARGET = os.path.join(agtest.SOURCE_ROOT, "samples", "attach_target.py")


def start_job(seconds):
    p = subprocess.Popen([agtest.PYTHON, TARGET, str(seconds)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True)
    agtest.check(p.stdout.readline().strip() == "ready", "the job says ready")
    return p


def finish_job(p):
    out = p.stdout.read()
    rc = p.wait(timeout=60)
    agtest.check_eq(rc, 0, "the job's exit status")
    agtest.check("done traces=" in out, "the job printed its last line", out[-300:], "done traces=...")
    return [tuple(int(v) for v in m.groups()) for m in re.finditer(r"m=(\d+) traces=(\d+) eager=(\d+)", out)]


def attach(pid, out, *args, timeout=60):
    return subprocess.run([agtest.AGPROF, "attach", "-q", "-o", out] + list(args) + [str(pid)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)


def counts(path):
    db = sqlite3.connect(path)
    meta = dict(db.execute("SELECT key, value FROM meta"))
    traces = db.execute("SELECT count(*) FROM traces").fetchone()[0]
    eager = db.execute("SELECT (SELECT count(*) FROM eager_ops) + "
                       "(SELECT coalesce(sum(count), 0) FROM eager_op_buckets)").fetchone()[0]
    return int(meta["start_ns"]), int(meta["end_ns"]), traces, eager


def in_window(lines, start, end, col):
    """(fewest, most) events of column col the job's counters allow between start and end."""
    before = [v for v in lines if v[0] <= start]
    after = [v for v in lines if v[0] >= end]
    inside = [v for v in lines if start <= v[0] <= end]
    most = (after[0][col] if after else lines[-1][col]) - (before[-1][col] if before else 0)
    fewest = inside[-1][col] - inside[0][col] if len(inside) > 1 else 0
    return fewest, most


def case_window(d):
    job = start_job(9)
    out = os.path.join(d, "window.agprof")
    r = attach(job.pid, out, "--duration", "4")
    agtest.check_eq(r.returncode, 0, "agprof attach's status (%s)" % r.stderr.strip())
    lines = finish_job(job)
    start, end, traces, eager = counts(out)
    agtest.check(3.5e9 <= end - start <= 6e9, "the window lasts about --duration", end - start, "4 s")
    for name, got, col in (("traces", traces, 1), ("eager ops", eager, 2)):
        fewest, most = in_window(lines, start, end, col)
        print("%s: recorded %d, the job's counters allow %d..%d" % (name, got, fewest, most))
        agtest.check(fewest <= got <= most and got > 0, "%s within the job's own counts" % name, got,
                     "%d..%d" % (fewest, most))


def case_again(d):
    job = start_job(16)
    for i in range(2):
        out = os.path.join(d, "again%d.agprof" % i)
        r = attach(job.pid, out, "--duration", "1.5")
        agtest.check_eq(r.returncode, 0, "attach #%d (%s)" % (i + 1, r.stderr.strip()))
        agtest.check(counts(out)[2] >= 2, "attach #%d recorded the retraces" % (i + 1))
        time.sleep(0.5)
    # a third, until Ctrl-C; meanwhile a fourth finds the program busy (no double hooks)
    first = subprocess.Popen([agtest.AGPROF, "attach", "-q", "-o", os.path.join(d, "again2.agprof"), str(job.pid)],
                             stderr=subprocess.PIPE, text=True)
    time.sleep(2)
    r = attach(job.pid, os.path.join(d, "busy.agprof"), "--duration", "1")
    agtest.check_eq(r.returncode, 8, "a second attach while recording: exit 8 (%s)" % r.stderr.strip())
    agtest.check("already recording" in r.stderr, "its message", r.stderr, "already recording")
    first.send_signal(signal.SIGINT)
    agtest.check_eq(first.wait(timeout=60), 0, "the first attach after Ctrl-C (%s)" % first.stderr.read().strip())
    agtest.check(counts(os.path.join(d, "again2.agprof"))[2] >= 2, "it recorded the retraces")
    finish_job(job)


def case_errors(d):
    sleeper = subprocess.Popen(["sleep", "30"])
    r = attach(sleeper.pid, os.path.join(d, "x.agprof"))
    agtest.check_eq(r.returncode, 6, "not a Python process: exit 6 (%s)" % r.stderr.strip())
    agtest.check("not a Python process" in r.stderr, "its message", r.stderr, "not a Python process")
    sleeper.kill()
    sleeper.wait()
    r = attach(sleeper.pid, os.path.join(d, "x.agprof"))
    agtest.check_eq(r.returncode, 4, "no such process: exit 4 (%s)" % r.stderr.strip())
    agtest.check("no such process" in r.stderr, "its message", r.stderr, "no such process")
    py = subprocess.Popen([agtest.PYTHON, "-c", "import time; time.sleep(30)"])
    time.sleep(0.5)
    r = attach(py.pid, os.path.join(d, "x.agprof"))
    agtest.check_eq(r.returncode, 7, "no TensorFlow: exit 7 (%s)" % r.stderr.strip())
    agtest.check("--wait-tf" in r.stderr, "it offers --wait-tf", r.stderr, "--wait-tf")
    py.kill()
    py.wait()
    agtest.check(not os.path.exists(os.path.join(d, "x.agprof")), "no recording left by the failures")


def case_exit(d):
    """--wait-tf on a program that imports TensorFlow late; no --duration: the program's exit ends it."""
    late = ("import sys, time, runpy; time.sleep(1.5); sys.argv = [%r, '4']; "
            "runpy.run_path(%r, run_name='__main__')" % (TARGET, TARGET))
    job = subprocess.Popen([agtest.PYTHON, "-c", late], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    time.sleep(0.5)
    out = os.path.join(d, "exit.agprof")
    r = attach(job.pid, out, "--wait-tf", timeout=90)
    agtest.check_eq(r.returncode, 0, "attach --wait-tf until the program's exit (%s)" % r.stderr.strip())
    agtest.check_eq(job.stdout.readline().strip(), "ready", "the program's first line")
    finish_job(job)
    agtest.check(os.path.exists(out) and counts(out)[2] >= 2, "the recording holds the retraces")


def attach_folders():
    return [f for f in os.listdir("/tmp") if f.startswith("agprof-attach-")]


def case_kill(d):
    folders = set(attach_folders())
    job = start_job(14)
    for i, delay in enumerate((0.0, 0.02, 0.3, 1.5)):
        p = subprocess.Popen([agtest.AGPROF, "attach", "-q", "-o", os.path.join(d, "k%d.agprof" % i),
                              str(job.pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait()
        time.sleep(0.5)  # the job's watcher sees agprof gone and stops its recording
    pid = job.pid
    lines = finish_job(job)
    agtest.check(len(lines) > 100, "the job kept running and printing", len(lines), "> 100 lines")
    time.sleep(0.5)
    writers = subprocess.run(["pgrep", "-f", "__attach --pid %d " % pid], stdout=subprocess.PIPE, text=True).stdout
    agtest.check_eq(writers.split(), [], "no recording writer left running")
    left = sorted(set(attach_folders()) - folders)
    agtest.check_eq(left, [], "no attach folder of this job left in /tmp")


HOSTILE = r"""
import glob, os, sys, threading, time
import tensorflow as tf

status = sys.argv[1].encode().decode("unicode_escape")

def forge():
    # every attach folder's status, rewritten as fast as agprof could read it (status.tmp, then renamed)
    while True:
        for folder in glob.glob("/tmp/agprof-attach-*"):
            try:
                with open(os.path.join(folder, "forged.tmp"), "w") as f:
                    f.write(status)
                os.replace(os.path.join(folder, "forged.tmp"), os.path.join(folder, "status"))
            except OSError:
                pass
        time.sleep(0.002)

threading.Thread(target=forge, daemon=True).start()
print("ready", flush=True)
time.sleep(float(sys.argv[2]))
"""


def case_hostile(d):
    """The status file is the program's to write (issue 49): escape sequences and line breaks in it
    reach no terminal, and a program that claims init as its writer and never answers the stop is
    let go of: agprof attach ends within bounds with one clean error line."""
    escape = "\\x1b]0;PWNED\\x07\\x1b[31mred\\nsecond line\\x9b"
    for name, status, wait in (("busy", "busy\\t" + escape, 20), ("started", "started\\t1 " + escape, 40)):
        job = subprocess.Popen([agtest.PYTHON, "-c", HOSTILE, status, str(wait)], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
        agtest.check(job.stdout.readline().strip() == "ready", "the hostile job says ready")
        t0 = time.time()
        r = subprocess.run([agtest.AGPROF, "attach", "-q", "-o", os.path.join(d, name + ".agprof"), "--duration",
                            "1", str(job.pid)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        took = time.time() - t0
        err = r.stderr.decode("utf-8", "replace")
        print("%s: exit %d in %.1f s: %s" % (name, r.returncode, took, err.strip()))
        agtest.check(0 < r.returncode < 128, "%s: a documented failure, not a signal" % name, r.returncode)
        agtest.check(len(err.strip().splitlines()) == 1 and err.startswith("error: "), "%s: one error line" % name,
                     err)
        agtest.check(not any(ord(c) < 0x20 and c != "\n" or 0x7f <= ord(c) <= 0x9f for c in err),
                     "%s: no control character on stderr" % name, repr(err))
        agtest.check(took < 30, "%s: let go of within bounds" % name, took, "< 30 s")
        job.kill()
        job.wait()


def main():
    agtest.need_agprof()
    case = sys.argv[1]
    d = agtest.tmpdir()
    {"window": case_window, "again": case_again, "errors": case_errors, "kill": case_kill,
     "exit": case_exit, "hostile": case_hostile}[case](d)
    agtest.finish("attach-" + case)


if __name__ == "__main__":
    main()
