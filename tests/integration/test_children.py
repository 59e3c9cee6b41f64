"""Child processes of the workload are recorded in the same file.

1. samples/fork_children.py: a multiprocessing Pool (fork) whose workers run
   eager ops, each measuring its own count with the TF profiler and sending
   pid, count and window back to the parent (oracle "extra.children").  Each
   child pid must be in `processes` (ppid = the parent), and its eager ops in
   its window must equal the child's profiler count.  The workers leave by
   os._exit (no atexit handlers run), as multiprocessing workers do.
2. An exec'd grandchild: `sh -c 'PYTHON samples/retrace_dtype.py; exit 4'`.
   agprof exits 4 (the shell's status); the Python process, a child of sh,
   is recorded with the traces the oracle counts.
3. A burst of 100 concurrent short children (sh + /bin/true &), 10 rounds:
   agprof must survive it (no SIGBUS), record every process and clean up
   its /dev/shm directory.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq, q1  # noqa: E402


def fork_case():
    proc, db, oracle = agtest.run_sample_recorded("fork_children.py")
    check_eq(proc.returncode, 0, "agprof exit status for fork_children.py")
    agtest.check_recording_header(db)
    parent = oracle["pid"]
    children = oracle["extra"]["children"]
    check(len(children) == 3, "children reported by the sample", len(children), 3)
    for c in children:
        pid = c["pid"]
        row = db.execute("SELECT * FROM processes WHERE pid = ?", (pid,)).fetchone()
        if not check(row is not None, "processes row for forked child %d" % pid):
            continue
        check_eq(row["ppid"], parent, "ppid of child %d" % pid)
        check_eq(row["tf_status"], "hooked", "tf_status of child %d" % pid)
        check_eq(row["exit_status"], 0, "exit_status of child %d" % pid)
        t0, t1 = c["eager_window_ns"]
        got = q1(db, "SELECT count(*) FROM eager_ops WHERE pid = ? AND start_ns BETWEEN ? AND ?",
                 pid, t0, t1)
        check_eq(got, c["eager_ops"], "eager ops of child %d in its profiler window" % pid)
        tids = q1(db, "SELECT count(DISTINCT tid) FROM eager_ops WHERE pid = ?", pid)
        check(tids >= 1, "threads with eager ops in child %d" % pid, tids, ">= 1")
    # The children's ops are not recorded under the parent (which runs no
    # AddV2 of its own).
    n = q1(db, "SELECT count(*) FROM eager_ops e JOIN strings s ON s.id = e.op_id "
           "WHERE e.pid = ? AND s.text = 'AddV2'", parent)
    check_eq(n, 0, "AddV2 ops (children-only op type) recorded under the parent pid")


def exec_case():
    d = agtest.tmpdir()
    out = os.path.join(d, "sh.agprof")
    oracle_path = os.path.join(d, "oracle.json")
    script = '"$0" "$1"; exit 4'
    p = agtest.run_agprof(out, ["/bin/sh", "-c", script, agtest.PYTHON,
                                agtest.sample("retrace_dtype.py")],
                          env_extra={"AGPROF_ORACLE": oracle_path})
    check_eq(p.returncode, 4, "agprof exit status for sh -c '...; exit 4'")
    if not (check(os.path.exists(out), "recording for the sh workload")
            and check(os.path.exists(oracle_path), "oracle from retrace_dtype.py under sh")):
        return
    import json
    with open(oracle_path) as fh:
        oracle = json.load(fh)
    db = agtest.open_recording(out)
    agtest.check_recording_header(db)
    pid = oracle["pid"]
    row = db.execute("SELECT * FROM processes WHERE pid = ?", (pid,)).fetchone()
    if not check(row is not None, "processes row of the exec'd python %d" % pid):
        return
    check_eq(row["tf_status"], "hooked", "tf_status of the exec'd python")
    sh = db.execute("SELECT * FROM processes WHERE pid = ?", (row["ppid"],)).fetchone()
    check(sh is not None, "processes row of its parent, the shell")
    if sh is not None:
        check_eq(sh["tf_status"], "not-loaded", "tf_status of the shell")
        check_eq(sh["exit_status"], 4, "exit_status of the shell")
    n = q1(db, "SELECT count(*) FROM traces t JOIN functions fn ON fn.id = t.function_id "
           "JOIN strings s ON s.id = fn.name_id WHERE s.text = 'normalize' AND t.pid = ?", pid)
    check_eq(n, oracle["functions"]["normalize"]["tracing_count"],
             "traces of normalize in the exec'd python")
    m = agtest.meta(db)
    check_eq(m.get("exit_status"), "4", "meta exit_status (the shell's)")
    check_eq(m.get("tf_status"), "hooked", "meta tf_status (a process loaded TF)")


def burst_case(rounds=10, children=100):
    """Many short children starting at once: `sh -c 'for i in $(seq N); do
    /bin/true & done; wait'`.  Every process is recorded (the shell, seq and
    the N true: N + 2 rows), agprof exits 0, and its /dev/shm directory
    (agprof-<uid>/<its pid>-*) is gone afterwards."""
    d = agtest.tmpdir()
    script = "for i in $(seq %d); do /bin/true & done; wait" % children
    for r in range(rounds):
        out = os.path.join(d, "burst-%d.agprof" % r)
        p = subprocess.Popen([agtest.AGPROF, "run", "-q", "-o", out, "--", "/bin/sh", "-c", script],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, err = p.communicate(timeout=120)
        check_eq(p.returncode, 0, "agprof exit status, round %d of %d concurrent children"
                 % (r + 1, children))
        agtest.check_shm_cleaned(p.pid)
        if p.returncode != 0 or not os.path.exists(out):
            continue
        db = agtest.open_recording(out)
        agtest.check_recording_header(db)
        check_eq(q1(db, "SELECT count(*) FROM processes"), children + 2,
                 "processes recorded (sh, seq and %d /bin/true), round %d" % (children, r + 1))


def main():
    agtest.need_agprof()
    fork_case()
    exec_case()
    burst_case()
    agtest.finish("children")


if __name__ == "__main__":
    main()
