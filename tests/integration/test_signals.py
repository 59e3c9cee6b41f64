"""Signals: a workload killed by a signal.

1. samples/self_sigterm.py runs 200 AddV2 ops, then sends itself SIGTERM:
   agprof must exit 143 (as a shell reports it), and the recording must say
   exit_status 143 / exit_signal 15 and hold the 200 ops.
2. SIGKILL mid-run: samples/eager_heavy.py --marker N --sleep S prints
   "AGPROF-MARKER N pid P" after N eager ops and sleeps; the test kills P
   with SIGKILL right after reading the marker.  agprof must exit 137 and
   leave a valid SQLite recording holding the N ops done so far (the loop
   is asleep when killed, so exactly N/4 of each of its four op types).
3. SIGTERM and SIGINT sent to agprof itself are forwarded to the workload
   (eager_heavy.py, asleep after its marker): agprof exits 128+N.  Python
   turns SIGINT into KeyboardInterrupt; uncaught, CPython (>= 3.8) ends by
   killing itself with SIGINT, so the status is 130 there too.
"""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq, q1  # noqa: E402

MARKER_OPS = 20000


def op_counts(db, pid):
    return {r[0]: r[1] for r in db.execute(
        "SELECT s.text, count(*) FROM eager_ops e JOIN strings s ON s.id = e.op_id "
        "WHERE e.pid = ? GROUP BY s.text", (pid,))}


def sigterm_case(d):
    out = os.path.join(d, "term.agprof")
    proc = agtest.run_agprof(out, [agtest.PYTHON, agtest.sample("self_sigterm.py")])
    check_eq(proc.returncode, 143, "agprof exit status, workload killed by SIGTERM")
    check(b"about to be terminated" in proc.stdout, "workload stdout under agprof",
          proc.stdout[-300:], "about to be terminated ...")
    if not check(os.path.exists(out), "recording exists after SIGTERM"):
        return
    db = agtest.open_recording(out)
    agtest.check_recording_header(db)
    m = agtest.meta(db)
    check_eq(m.get("exit_status"), "143", "meta exit_status after SIGTERM")
    check_eq(m.get("exit_signal"), "15", "meta exit_signal after SIGTERM")
    pid = q1(db, "SELECT pid FROM processes WHERE tf_status = 'hooked' ORDER BY start_ns LIMIT 1")
    counts = op_counts(db, pid) if pid else {}
    check_eq(counts.get("AddV2", 0), 200, "AddV2 ops recorded before SIGTERM")
    row = db.execute("SELECT exit_status FROM processes WHERE pid = ?", (pid,)).fetchone()
    check_eq(row and row[0], 143, "processes.exit_status of the SIGTERMed workload")


def sigkill_case(d):
    out = os.path.join(d, "kill.agprof")
    cmd = [agtest.AGPROF, "run", "-o", out, "--", agtest.PYTHON,
           agtest.sample("eager_heavy.py"), "--ops", str(MARKER_OPS * 50),
           "--marker", str(MARKER_OPS), "--sleep", "30"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         stdin=subprocess.DEVNULL, cwd=agtest.SOURCE_ROOT)
    victim = None
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        line = p.stdout.readline()
        if not line:
            break
        parts = line.decode().split()
        if parts[:1] == ["AGPROF-MARKER"]:
            done, victim = int(parts[1]), int(parts[3])
            check_eq(done, MARKER_OPS, "first marker's op count")
            break
    if victim is None:
        p.kill()
        p.wait()
        agtest.fail("no AGPROF-MARKER line from eager_heavy.py under agprof")
        return
    time.sleep(0.2)  # the loop is asleep now (30 s)
    os.kill(victim, signal.SIGKILL)
    try:
        rc = p.wait(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        agtest.fail("agprof did not exit within 120 s after its workload got SIGKILL")
        return
    check_eq(rc, 137, "agprof exit status, workload killed by SIGKILL")
    agtest.check_shm_cleaned(p.pid)
    if not check(os.path.exists(out), "recording exists after SIGKILL"):
        return
    db = agtest.open_recording(out)
    agtest.check_recording_header(db)
    m = agtest.meta(db)
    check_eq(m.get("exit_status"), "137", "meta exit_status after SIGKILL")
    check_eq(m.get("exit_signal"), "9", "meta exit_signal after SIGKILL")
    counts = op_counts(db, victim)
    total = sum(counts.values())
    check(total >= MARKER_OPS, "eager ops recorded for the killed pid %d" % victim,
          total, ">= %d" % MARKER_OPS)
    for op in ("AddV2", "Mul", "Sub", "Maximum"):
        check_eq(counts.get(op, 0), MARKER_OPS // 4,
                 "%s ops recorded before SIGKILL (loop asleep at the kill)" % op)


def forward_case(d, sig):
    """A signal sent to agprof itself is forwarded to the workload."""
    out = os.path.join(d, "fwd-%d.agprof" % sig)
    cmd = [agtest.AGPROF, "run", "-o", out, "--", agtest.PYTHON,
           agtest.sample("eager_heavy.py"), "--ops", str(MARKER_OPS * 50),
           "--marker", str(MARKER_OPS), "--sleep", "30"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         stdin=subprocess.DEVNULL, cwd=agtest.SOURCE_ROOT)
    line = b""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and not line.startswith(b"AGPROF-MARKER"):
        line = p.stdout.readline()
        if not line:
            break
    if not line.startswith(b"AGPROF-MARKER"):
        p.kill()
        p.wait()
        agtest.fail("no AGPROF-MARKER line (signal %d forwarding case)" % sig)
        return
    victim = int(line.split()[3])
    p.send_signal(sig)
    try:
        rc = p.wait(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        os.kill(victim, signal.SIGKILL)
        agtest.fail("agprof did not exit within 120 s after it got signal %d" % sig)
        return
    check_eq(rc, 128 + sig, "agprof exit status after signal %d sent to agprof" % sig)
    agtest.check_shm_cleaned(p.pid)
    if not check(os.path.exists(out), "recording exists after signal %d to agprof" % sig):
        return
    db = agtest.open_recording(out)
    agtest.check_recording_header(db)
    m = agtest.meta(db)
    check_eq(m.get("exit_signal"), str(sig), "meta exit_signal (signal %d forwarded)" % sig)
    counts = op_counts(db, victim)
    check_eq(counts.get("AddV2", 0), MARKER_OPS // 4,
             "AddV2 ops recorded before the forwarded signal %d" % sig)


def main():
    agtest.need_agprof()
    d = agtest.tmpdir()
    sigterm_case(d)
    sigkill_case(d)
    forward_case(d, signal.SIGTERM)
    forward_case(d, signal.SIGINT)
    agtest.finish("signals")


if __name__ == "__main__":
    main()
