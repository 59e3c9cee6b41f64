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
4. Children's LD_PRELOAD (env_case): a workload that starts a child with
   its own LD_PRELOAD (subprocess with env=..., i.e. execve) gets a child
   with both the collector and that library loaded (its /proc/self/maps),
   and the child sees only its own LD_PRELOAD in its environment.  After
   system() and popen() the workload's own LD_PRELOAD (set after start-up)
   is exactly what it was, and those children load both libraries too.
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


ENV_WORKLOAD = r"""
import ctypes, json, os, subprocess, sys
out, extra = sys.argv[1], sys.argv[2]
libc = ctypes.CDLL(None)
libc.getenv.restype = ctypes.c_char_p
def maps(cmd_out):
    with open(cmd_out) as fh:
        text = fh.read()
    return {"collector": "libagprof-collector" in text, "extra": extra in text}
res = {}
# 1. execve with an environment of its own (subprocess with env=)
env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LD_PRELOAD": extra}
res["exec_maps"] = subprocess.run(["/bin/cat", "/proc/self/maps"], env=env,
                                  capture_output=True, text=True).stdout
res["exec_env"] = subprocess.run(["/usr/bin/env"], env=env, capture_output=True, text=True).stdout
# 2. system() and popen() after the workload set its own LD_PRELOAD
os.environ["LD_PRELOAD"] = extra
res["before"] = (libc.getenv(b"LD_PRELOAD") or b"").decode()
libc.system(("/bin/cat /proc/self/maps > %s.system" % out).encode())
res["after_system"] = (libc.getenv(b"LD_PRELOAD") or b"").decode()
libc.popen.restype = ctypes.c_void_p
libc.popen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
libc.pclose.argtypes = [ctypes.c_void_p]
f = libc.popen(("/bin/cat /proc/self/maps > %s.popen" % out).encode(), b"r")
libc.pclose(f)
res["after_popen"] = (libc.getenv(b"LD_PRELOAD") or b"").decode()
res["system"] = maps(out + ".system")
res["popen"] = maps(out + ".popen")
res["leaked"] = sorted(k for k in os.environ
                       if k in ("AGPROF_SHM", "AGPROF_ORIG_LD_PRELOAD", "AGPROF_CUDA_INJECTION"))
with open(out, "w") as fh:
    json.dump(res, fh)
"""


def env_case():
    import ctypes.util
    import json
    d = agtest.tmpdir()
    extra = ctypes.util.find_library("m") or "libm.so.6"  # loaded by neither cat nor env
    script, res_path = os.path.join(d, "env_workload.py"), os.path.join(d, "env.json")
    with open(script, "w") as fh:
        fh.write(ENV_WORKLOAD)
    out = os.path.join(d, "env.agprof")
    p = agtest.run_agprof(out, [agtest.PYTHON, script, res_path, extra])
    check_eq(p.returncode, 0, "agprof exit status for the LD_PRELOAD workload: %s"
             % p.stderr.decode("utf-8", "replace")[-500:])
    if not check(os.path.exists(res_path), "results of the LD_PRELOAD workload"):
        return
    with open(res_path) as fh:
        res = json.load(fh)
    check("libagprof-collector" in res["exec_maps"], "exec'd child with its own LD_PRELOAD loads the collector")
    check(extra in res["exec_maps"], "exec'd child loads the library it was asked to preload (%s)" % extra)
    env_lines = res["exec_env"].splitlines()
    check_eq([l for l in env_lines if l.startswith("LD_PRELOAD=")], ["LD_PRELOAD=" + extra],
             "LD_PRELOAD as the exec'd child sees it")
    check_eq([l for l in env_lines if l.split("=")[0] in ("AGPROF_SHM", "AGPROF_ORIG_LD_PRELOAD")], [],
             "the launcher's variables in the exec'd child's environment")
    check_eq(res["before"], extra, "the workload's own LD_PRELOAD, set at run time")
    check_eq(res["after_system"], extra, "the workload's LD_PRELOAD after system()")
    check_eq(res["after_popen"], extra, "the workload's LD_PRELOAD after popen()")
    for how in ("system", "popen"):
        check_eq(res[how], {"collector": True, "extra": True}, "libraries loaded by the %s() child" % how)
    check_eq(res["leaked"], [], "AGPROF_* variables in the workload's os.environ")
    db = agtest.open_recording(out)
    n = q1(db, "SELECT count(*) FROM processes WHERE argv = '[\"/bin/cat\",\"/proc/self/maps\"]'")
    check_eq(n, 3, "cat children recorded (exec, system, popen)")


def main():
    agtest.need_agprof()
    env_case()
    fork_case()
    exec_case()
    burst_case()
    agtest.finish("children")


if __name__ == "__main__":
    main()
