"""Workloads without TensorFlow are run and recorded, as `not-loaded`.

- /bin/echo (not Python at all): output and exit status pass through, the
  recording holds its process with tf_status 'not-loaded' and no TF events.
- Python without TensorFlow (`python -c 'print(1)'`), and one exiting 5.
- Python that imports TensorFlow and runs nothing: 'hooked' (the hooks are
  in place), not 'mismatch', and no TF events.

Each such recording is still a report: `agprof report` exits 0 and says
what was and was not seen (text and JSON), `agprof check` exits 0.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq, q1  # noqa: E402


def check_not_loaded(out, what, want_status):
    if not check(os.path.exists(out), "recording exists for %s" % what):
        return
    db = agtest.open_recording(out)
    agtest.check_recording_header(db)
    m = agtest.meta(db)
    check_eq(m.get("tf_status"), "not-loaded", "meta tf_status for %s" % what)
    check_eq(m.get("exit_status"), str(want_status), "meta exit_status for %s" % what)
    procs = db.execute("SELECT pid, tf_status, tf_version, exit_status FROM processes").fetchall()
    check(len(procs) >= 1, "processes rows for %s" % what, len(procs), ">= 1")
    check_eq(sorted({p["tf_status"] for p in procs}), ["not-loaded"],
             "processes.tf_status for %s" % what)
    check_eq({p["tf_version"] for p in procs}, {None}, "processes.tf_version for %s" % what)
    for table in ("eager_ops", "function_calls", "traces", "graph_functions"):
        check_eq(q1(db, "SELECT count(*) FROM %s" % table), 0, "%s rows for %s" % (table, what))


def check_report(out, what, want_reason):
    """agprof report / check on a recording without TensorFlow activity."""
    rc, text, err = agtest.agprof_cmd("report", out)
    check_eq(rc, 0, "agprof report exit status on %s" % what)
    check("no TensorFlow activity was recorded" in text and want_reason in text and "not seen:" in text,
          "agprof report on %s says what was and was not seen" % what, text[-500:], want_reason)
    rc, js, err = agtest.agprof_cmd("report", "--format", "json", out)
    check_eq(rc, 0, "agprof report --format json exit status on %s" % what)
    reason = json.loads(js)["session"]["empty_reason"] if rc == 0 else None
    check(reason is not None and want_reason in reason, "JSON session.empty_reason on %s" % what,
          reason, want_reason)
    rc, text, err = agtest.agprof_cmd("check", out)
    check_eq(rc, 0, "agprof check exit status on %s" % what)


def main():
    agtest.need_agprof()
    d = agtest.tmpdir()

    out = os.path.join(d, "echo.agprof")
    p = agtest.run_agprof(out, ["/bin/echo", "hello", "from echo"])
    check_eq(p.returncode, 0, "exit status of /bin/echo under agprof")
    check_eq(p.stdout, b"hello from echo\n", "stdout of /bin/echo under agprof")
    check_not_loaded(out, "/bin/echo", 0)

    out = os.path.join(d, "py.agprof")
    p = agtest.run_agprof(out, [agtest.PYTHON, "-c", "print(1)"])
    check_eq(p.returncode, 0, "exit status of python -c 'print(1)'")
    check_eq(p.stdout, b"1\n", "stdout of python -c 'print(1)'")
    check_not_loaded(out, "python without TensorFlow", 0)
    check_report(out, "python without TensorFlow", "TensorFlow was never loaded")

    out = os.path.join(d, "py5.agprof")
    p = agtest.run_agprof(out, [agtest.PYTHON, "-c", "import sys; print('bye'); sys.exit(5)"])
    check_eq(p.returncode, 5, "exit status of a Python exiting 5 without TensorFlow")
    check_eq(p.stdout, b"bye\n", "stdout of the Python exiting 5")
    check_not_loaded(out, "python exiting 5", 5)
    check_report(out, "python exiting 5", "exited with status 5 before TensorFlow was loaded")

    out = os.path.join(d, "import-only.agprof")
    p = agtest.run_agprof(out, [agtest.PYTHON, "-c", "import tensorflow as tf; print('imported')"])
    check_eq(p.returncode, 0, "exit status of a Python importing TensorFlow only")
    check_eq(p.stdout, b"imported\n", "stdout of the Python importing TensorFlow only")
    db = agtest.open_recording(out)
    check_eq(agtest.meta(db).get("tf_status"), "hooked", "meta tf_status when TensorFlow is only imported")
    for table in ("eager_ops", "function_calls", "traces", "session_runs"):
        check_eq(q1(db, "SELECT count(*) FROM %s" % table), 0, "%s rows when TensorFlow is only imported" % table)
    check_report(out, "python importing TensorFlow only", "TensorFlow was loaded but did nothing")

    bogus = os.path.join(d, "not-a-recording.agprof")
    with open(bogus, "w") as fh:
        fh.write("hello\n")
    rc, text, err = agtest.agprof_cmd("report", bogus)
    check(rc == 2 and err.startswith("error: "), "agprof report on a file that is not a recording: exit 2",
          (rc, err), (2, "error: ..."))
    agtest.finish("non_tf")


if __name__ == "__main__":
    main()
