#!/usr/bin/env python3
"""Does agprof's estimated saving match what its fix really saves?

For each fixable sample: copy it (with oracle.py) to a temporary directory,
record it with `agprof run`, read the retracing finding's saving_ns from
`agprof report --format json`, apply `agprof fix REC | patch -p1` to a second
copy, then time the program's main loop (the sample's main(), stdout
discarded, TensorFlow imported before the timer starts) of the original and
the patched copy, each in a fresh process, --reps times; the measured saving
is the difference of the medians.  The estimate is the median saving_ns of
--recordings recordings.  Recordings and timed runs alternate (record, time
the original, time the patched copy, record, ...): on a shared machine the
load moves both, and it should move them at the same moments.

    python bench/savings.py [--agprof build/cmd/agprof/agprof] [--reps 5] [--recordings 3]

Last row: collatz.py, whose eager loop and tf.function twin the program
times itself; the eager-hotspot finding's saving_ns against eager - graph
(median of --reps plain runs).

Prints a table: finding, estimate, measured, error (estimate vs measured).
Target: within +-30%.
"""
import argparse
import contextlib
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SAMPLES = [
    ("retrace_shape.py", "predict", "shape"),
    ("retrace_scalar.py", "sgd_step", "python-value"),
    ("retrace_dtype.py", "normalize", "dtype"),
    ("new_function_object.py", "scale_and_sum", "new-function-object"),
]


def time_main(path):
    """Worker: import TensorFlow, then time the sample's main() once (stdout discarded); print seconds."""
    import importlib.util
    import tensorflow  # noqa: F401  (imported outside the timing, like the program's own loop timer)

    sys.path.insert(0, os.path.dirname(path))
    spec = importlib.util.spec_from_file_location("sample_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    with contextlib.redirect_stdout(io.StringIO()):
        spec.loader.exec_module(mod)
        t0 = time.perf_counter()
        mod.main()
        dt = time.perf_counter() - t0
    print(dt)


def twin_row(a):
    """collatz.py times its eager loop and its tf.function twin itself: the eager-hotspot estimate vs that."""
    import re
    sample = "collatz.py"
    top = tempfile.mkdtemp(prefix="agprof-savings-")
    for name in (sample, "oracle.py"):
        shutil.copy(os.path.join(ROOT, "samples", name), top)
    def timer(out):
        m = re.search(r"eager: ([0-9.]+) s, tf.function \(tracing included\): ([0-9.]+) s", out.decode())
        return (float(m.group(1)) - float(m.group(2))) * 1e9

    ests, costs, measured, same_run = [], [], [], []
    for r in range(max(a.recordings, a.reps)):
        if r < a.recordings:
            rec = os.path.join(top, "rec%d.agprof" % r)
            p = run([a.agprof, "run", "-q", "-o", rec, "--", a.python, sample], cwd=top)
            if p.returncode:
                sys.exit("collatz.py: agprof run failed")
            report = json.loads(run([a.agprof, "report", "--format", "json", rec]).stdout)
            f = next(x for x in report["findings"] if x["rule"] == "eager-hotspot")
            ests.append(f["saving_ns"])
            costs.append(f["cost_ns"])
            # the recorded run's own timer: the same moments as the estimate (the collector's overhead included)
            same_run.append((f["saving_ns"] - timer(p.stdout)) / timer(p.stdout))
            os.unlink(rec)
        if r < a.reps:
            measured.append(timer(run([a.python, sample], cwd=top).stdout))
    shutil.rmtree(top, ignore_errors=True)
    est, meas = statistics.median(ests), statistics.median(measured)
    print("collatz.py: estimate vs the recorded run's own eager - graph timer, per recording: %s" %
          " ".join("%+.0f%%" % (e * 100) for e in same_run))
    return ("collatz.py collatz_eager [eager-hotspot, twin]", est, meas, (est - meas) / meas,
            statistics.median(costs), None, None)


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agprof", default=os.path.join(ROOT, "build", "cmd", "agprof", "agprof"))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--reps", type=int, default=5, help="timed runs of each copy")
    ap.add_argument("--recordings", type=int, default=3, help="recordings whose median estimate is used")
    ap.add_argument("--only", help="only the sample whose file name contains this")
    ap.add_argument("--time", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.time:
        time_main(a.time)
        return 0
    rows = []
    load0 = os.getloadavg()
    for sample, function, cause in SAMPLES:
        if a.only and a.only not in sample:
            continue
        top = tempfile.mkdtemp(prefix="agprof-savings-")
        dirs = {}
        for tag in ("orig", "fixed"):
            d = dirs[tag] = os.path.join(top, tag)
            os.makedirs(d)
            for name in (sample, "oracle.py"):
                shutil.copy(os.path.join(ROOT, "samples", name), d)
        ests, costs = [], []
        times = {"orig": [], "fixed": []}

        def record(r):
            rec = os.path.join(top, "orig%d.agprof" % r)
            p = run([a.agprof, "run", "-q", "-o", rec, "--", a.python, sample], cwd=dirs["orig"])
            if p.returncode:
                sys.exit("%s: agprof run failed: %s" % (sample, p.stderr.decode()[-500:]))
            report = json.loads(run([a.agprof, "report", "--format", "json", rec]).stdout)
            f = next(x for x in report["findings"] if x["rule"] == "retracing" and x["function"] == function)
            ests.append(f["saving_ns"])
            costs.append(f["cost_ns"])
            return rec

        diff = run([a.agprof, "fix", "--function", function, record(0)]).stdout
        if run(["patch", "-p1"], cwd=dirs["fixed"], input=diff).returncode:
            sys.exit("%s: the patch does not apply" % sample)
        for r in range(max(a.recordings, a.reps)):
            if 0 < r < a.recordings:
                record(r)
            for tag in ("orig", "fixed") if r < a.reps else ():
                w = run([a.python, os.path.abspath(__file__), "--time", os.path.join(dirs[tag], sample)])
                if w.returncode:
                    sys.exit("%s: timing failed: %s" % (sample, w.stderr.decode()[-800:]))
                times[tag].append(float(w.stdout.decode().strip().splitlines()[-1]))
        t = {k: statistics.median(v) for k, v in times.items()}
        measured = (t["orig"] - t["fixed"]) * 1e9
        est = statistics.median(ests)
        err = (est - measured) / measured if measured > 0 else float("inf")
        rows.append((sample + " " + function + " [" + cause + "]", est, measured, err, statistics.median(costs),
                     t["orig"], t["fixed"]))
        shutil.rmtree(top, ignore_errors=True)
    if not a.only or a.only in "collatz.py":
        rows.append(twin_row(a))
    print("%-52s %10s %10s %8s %10s   %s" % ("finding", "estimate", "measured", "error", "cost_ns",
                                           "main() orig -> fixed (median of %d runs)" % a.reps))
    for name, est, meas, err, cost, to, tf_ in rows:
        print("%-52s %8.1fms %8.1fms %+7.0f%% %8.1fms   %s" % (
            name, est / 1e6, meas / 1e6, err * 100, cost / 1e6,
            "%.1f ms -> %.1f ms" % (to * 1e3, tf_ * 1e3) if to is not None else "program's own eager - graph timer"))
    print("load average (1, 5, 15 min): %.1f %.1f %.1f before, %.1f %.1f %.1f after, on %d CPUs" % (
        load0 + os.getloadavg() + (os.cpu_count(),)))
    bad = [r for r in rows if abs(r[3]) > 0.30]
    print("%d of %d estimates within +-30%%" % (len(rows) - len(bad), len(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
