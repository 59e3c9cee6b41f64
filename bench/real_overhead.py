#!/usr/bin/env python3
"""agprof's overhead on real third-party workloads, bare and under `agprof run` alternated, split by component.

The workloads (bench/real/, synthetic data, the libraries the setup installs in .venv):
  gpflow     GPflow SVGP models trained with Adam through a tf.function step, and a GPR fitted with its
             compiled Scipy optimizer (trace-heavy: the large_data notebook's way of training);
  nuts       a TensorFlow Probability NUTS sampler with step-size adaptation (kernel-heavy: one trace, a while
             loop of small kernels);
  keras      Keras fit, evaluate and predict of six small models (trace-heavy; one model of 24 thin layers);
  tfdata     a tf.data pipeline (traced maps, shuffle, batch, prefetch) feeding a tf.function training step.
Each round runs, for each workload, the bare program and each configuration under agprof, one after the other,
the order rotated from round to round (a load that drifts favours none).  Configurations (--configs):
  full       `agprof run` as shipped;
  nowatch    AGPROF_TRACE_WATCH=0: traces recorded, not watched (what the trace watch costs);
  nokernels  --no-kernels: kernels unhooked (what kernel collection costs);
  baseline   another build's `agprof run` (--baseline PATH), e.g. the commit before a change, under the same load.
The writer and the finish are read from each run's AGPROF_TIMING lines.
With --shared-core each configuration runs side by side with a bare run of its own, both programs (every thread)
on one CPU and agprof's launcher alone on the other (bench/long_run.py --shared-core): the scheduler interleaves
the two programs, so both see the machine at the same speed.  On the shared 2-core machine (load 10 and more
from other agents) the sequential runs' ratios moved by 20-50% from round to round; use --shared-core there.
TensorFlow then sizes its thread pools for one CPU, bare and under agprof alike.
Per workload and configuration it prints the median ratio to the bare run of the same round, with a 95%
interval (order statistics; 6 rounds at least) of:
  - wall: the whole run, TensorFlow's start-up and the recording's finish included (--shared-core: the 2-core
    wall, the program's CPU plus the finish's CPU, over the bare program's CPU: the programs' walls are not
    theirs when they share a CPU, and the finish's wall on a loaded machine is mostly waiting for one);
  - cpu: the program's CPU (its process tree's user + system less the launcher's own, getrusage), which leaves
    out the time other processes take the CPUs away;
  - launcher: the launcher's CPU (the writer) as a share of the bare program's CPU, and the finish (program exit
    to agprof exit, from AGPROF_TIMING=1), in seconds, with the launcher's CPU in it.
And the tracing time, against the program's own timer: each workload prints, for its first tf.function or
fit, the first call's and the second call's time, wall and the calling thread's CPU (bench/real/common.py);
first - second is the program's own measure of its tracing (and other once-only work): "first calls' cpu /
bare" is that CPU measure under agprof over the bare program's.  Without --shared-core the trace spans
recorded inside those first calls are summed too (outermost traces only), less their collector_ns
("recorded"); the part of the first calls outside any trace (first - second - spans, wall) is taken off the
bare program's measure, leaving its tracing time ("bare tracing"); "recorded / bare tracing" is the target
(within 5%).  "The same in cpu" (--shared-core too, where the programs' walls are not theirs): the recorded spans
less collector_ns over the first calls' own wall/CPU ratio, against the bare first calls' CPU less agprof's first
calls' CPU outside traces (the spans over that ratio).
With --keep DIR the recordings are kept, and `agprof report --format json` of each full and baseline run is
written beside them (REC.json), for comparing findings between builds.  Say the machine's load beside the
figures: `uptime` is printed first and last.

usage: bench/real_overhead.py [--rounds N] [--workloads gpflow,nuts,keras,tfdata] [--configs full,nowatch,nokernels]
                              [--shared-core] [--baseline PATH] [--python PY] [--agprof PATH] [--keep DIR]
"""
import argparse
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import tempfile

from benchlib import run_checked
from long_run import median_interval, print_load, side_by_side

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKLOADS = {"gpflow": ["gpflow_svgp.py"], "nuts": ["tfp_nuts.py"], "keras": ["keras_models.py"],
             "tfdata": ["tfdata_pipeline.py"]}
CONFIGS = {"full": ([], {}), "nowatch": ([], {"AGPROF_TRACE_WATCH": "0"}), "nokernels": (["--no-kernels"], {}),
           "baseline": ([], {})}
TIMING = re.compile(r"agprof: timing: launcher cpu ([0-9.]+) s .* finish ([0-9.]+) s")
FINISH_CPU = re.compile(r"agprof: timing: finish cpu +([0-9.]+) s")
FIRST = re.compile(r"first-call (\S+) ([0-9.]+) ([0-9.]+) at ([0-9]+) ([0-9]+) cpu ([0-9.]+) ([0-9.]+)")


def first_calls(stdout):
    """{name: (first s, second s, first call's start ns, end ns, first cpu s, second cpu s)} from a workload's output."""
    return {m.group(1): (float(m.group(2)), float(m.group(3)), int(m.group(4)), int(m.group(5)), float(m.group(6)),
                         float(m.group(7)))
            for m in FIRST.finditer(stdout)}


def traced(path, calls):
    """(raw span, span less collector_ns) in seconds of the outermost traces recorded inside the first calls (a
    trace inside another, a tf.function called by the one traced, is in its span and its collector_ns already)."""
    raw = own = 0
    with sqlite3.connect(path) as db:
        rows = sorted(db.execute("SELECT start_ns, end_ns, collector_ns FROM traces"), key=lambda r: (r[0], -r[1]))
    for call in calls.values():
        t0, t1, outer_end = call[2], call[3], 0
        for start, end, coll in rows:
            if start >= t0 and end <= t1 and start >= outer_end:
                raw += end - start
                own += max(0, end - start - coll)
                outer_end = end
    return raw / 1e9, own / 1e9


def agprof_cmd(args, config, rec, prog, launcher_cpu=None):
    """The command line and environment of prog under agprof in configuration config, its launcher pinned to
    launcher_cpu when given."""
    opts, extra = CONFIGS[config]
    pin = ["taskset", "-c", str(launcher_cpu)] if launcher_cpu is not None else []
    return pin + [args.baseline if config == "baseline" else args.agprof, "run", "-q", "-f", "-o", rec] + opts + ["--"] + prog, dict(os.environ, AGPROF_TIMING="1", **extra)


def timing(stderr):
    """(launcher cpu s, finish s, the launcher's cpu in the finish s) from agprof's AGPROF_TIMING lines."""
    m, c = TIMING.search(stderr), FINISH_CPU.search(stderr)
    return (float(m.group(1)) if m else float("nan"), float(m.group(2)) if m else float("nan"),
            float(c.group(1)) if c else float("nan"))


def program(args, workload):
    return [args.python, os.path.join(ROOT, "bench", "real", WORKLOADS[workload][0])]


def run_one(args, workload, config, tmp, r):
    """One run: (wall s, program cpu s, launcher cpu s, finish s, stdout, recording or None)."""
    prog = program(args, workload)
    if config == "bare":
        wall, out = run_checked(prog)
        return wall, out.cpu, 0.0, 0.0, out.stdout, None
    rec = os.path.join(tmp, "%s-%s-%d.agprof" % (workload, config, r))
    cmd, env = agprof_cmd(args, config, rec, prog)
    wall, out = run_checked(cmd, env)
    launcher, finish, finish_cpu = timing(out.stderr)
    return wall, out.cpu - launcher, launcher, (finish, finish_cpu), out.stdout, rec


def run_pair(args, workload, config, tmp, r):
    """--shared-core: the bare program and the one under agprof side by side on one CPU, the launcher on the other
    (CPUs swapped every 2 rounds, which starts first every other round): (bare, agprof) as run_one gives them."""
    cpu_prog, cpu_launcher = (1, 0) if r // 2 % 2 == 0 else (0, 1)
    pin = ["taskset", "-c", str(cpu_prog)]
    prog = pin + program(args, workload)
    rec = os.path.join(tmp, "%s-%s-%d.agprof" % (workload, config, r))
    cmd, env = agprof_cmd(args, config, rec, prog, cpu_launcher)
    bare, timed = side_by_side(r % 2, prog, cmd, env)
    launcher, finish, finish_cpu = timing(timed[3])
    return ((bare[0], bare[1], 0.0, (0.0, 0.0), bare[2], None),
            (timed[0], timed[1] - launcher, launcher, (finish, finish_cpu), timed[2], rec))


def fmt(values, digits=3):
    if not values:
        return "-"
    ci = median_interval(values)
    f = "%%.%df" % digits
    return (f % statistics.median(values)) + (" (" + f % ci[0] + "-" + f % ci[1] + ")" if ci else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--workloads", default="gpflow,nuts,keras,tfdata")
    ap.add_argument("--configs", default="full,nowatch,nokernels")
    ap.add_argument("--python", default=os.path.join(ROOT, ".venv", "bin", "python"))
    ap.add_argument("--agprof", default=os.path.join(ROOT, "build", "cmd", "agprof", "agprof"))
    ap.add_argument("--keep", help="keep the recordings, and each full run's report JSON, in this directory")
    ap.add_argument("--baseline", help="another agprof build: configuration 'baseline' runs it as shipped")
    ap.add_argument("--shared-core", action="store_true",
                    help="each configuration side by side with a bare run on one CPU, the launcher on the other")
    args = ap.parse_args()
    workloads, configs = args.workloads.split(","), args.configs.split(",")
    for w in workloads:
        if w not in WORKLOADS:
            ap.error("unknown workload %s" % w)
    for c in configs:
        if c not in CONFIGS or (c == "baseline" and not args.baseline):
            ap.error("unknown configuration %s (baseline needs --baseline)" % c)
    tmp = args.keep or tempfile.mkdtemp(prefix="agprof-real-")
    os.makedirs(tmp, exist_ok=True)
    try:
        print_load()
        stats = {(w, c): {k: [] for k in ("wall", "cpu", "launcher", "finish", "mb", "kernels", "recorded", "finish_cpu",
                                          "first_ratio", "recorded_cpu")}
                 for w in workloads for c in configs}
        for r in range(args.rounds):
            for w in workloads:
                one_round(args, w, configs, tmp, r, stats)
        summary(workloads, configs, stats, args.rounds, args.shared_core)
        print_load()
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


def one_round(args, w, configs, tmp, r, stats):
    """Round r of workload w: bare and every configuration, the order rotated by the round (--shared-core: each
    configuration side by side with a bare run of its own)."""
    if args.shared_core:
        runs = {c: run_pair(args, w, c, tmp, r) for c in configs}
    else:
        order = ["bare"] + configs
        k = r % len(order)
        order = order[k:] + order[:k]
        seq = {c: run_one(args, w, c, tmp, r) for c in order}
        runs = {c: (seq["bare"], seq[c]) for c in configs}
    line = ["round %d %s:" % (r + 1, w)]
    for c in configs:
        bare, (wall, cpu, launcher, (finish, finish_cpu), stdout, rec) = runs[c]
        st = stats[(w, c)]
        # --shared-core: the programs shared a CPU, their walls are not theirs; the 2-core wall is the program's
        # CPU with the finish's (on the wall's critical path; its CPU, the wall on this machine being mostly a wait) added
        fin = finish_cpu if finish_cpu == finish_cpu else finish  # a build that does not print it: the wall
        st["wall"].append((cpu + fin) / bare[1] if args.shared_core else wall / bare[0])
        st["cpu"].append(cpu / bare[1])
        st["launcher"].append(launcher / bare[1])
        st["finish"].append(finish)
        st["finish_cpu"].append(finish_cpu)
        st["mb"].append(os.path.getsize(rec) / 1e6)
        with sqlite3.connect(rec) as db:
            st["kernels"].append(db.execute("SELECT count(*) FROM kernels").fetchone()[0])
        calls, bare_calls = first_calls(stdout), first_calls(bare[4])
        first, bare_first = (sum(v[0] - v[1] for v in x.values()) for x in (calls, bare_calls))
        first_cpu, bare_first_cpu = (sum(v[4] - v[5] for v in x.values()) for x in (calls, bare_calls))
        raw, own = traced(rec, calls)
        bare_tracing = bare_first - (first - raw)  # the bare first calls less what was no trace under agprof
        st["first_ratio"].append(first_cpu / bare_first_cpu if bare_first_cpu > 0 else float("nan"))
        # the same in CPU, which a loaded machine does not stretch: the recorded spans put on the thread's CPU by
        # the first calls' own wall/CPU ratio (the program's timer), the bare program's first calls' CPU less
        # agprof's first calls' CPU outside traces
        stretch = first / first_cpu if first_cpu > 0 else float("nan")
        bare_tracing_cpu = bare_first_cpu - (first_cpu - raw / stretch)
        st["recorded_cpu"].append(own / stretch / bare_tracing_cpu if bare_tracing_cpu > 0 else float("nan"))
        if not args.shared_core:
            st["recorded"].append(own / bare_tracing if bare_tracing > 0 else float("nan"))
        line.append("%s: bare wall %.2f s cpu %.2f s; wall %.3f cpu %.3f launcher %.3f finish %.2f s (cpu %.2f s), %.1f MB, %d kernel"
                    " rows; first calls cpu %.3f s vs bare %.3f s, wall %.3f s vs bare %.3f s; traces %.3f s (%.3f s"
                    " less collector_ns)%s; in cpu %.3f s vs bare tracing %.3f s"
                    % (c, bare[0], bare[1], st["wall"][-1], st["cpu"][-1], st["launcher"][-1], finish, finish_cpu, st["mb"][-1],
                       st["kernels"][-1], first_cpu, bare_first_cpu, first, bare_first, raw, own,
                       "" if args.shared_core else " vs bare tracing %.3f s" % bare_tracing, own / stretch,
                       bare_tracing_cpu))
        if args.keep and c in ("full", "baseline"):
            rep = subprocess.run([args.agprof, "report", "--format", "json", rec], stdout=subprocess.PIPE, text=True)
            # findings by the same analyzer for both builds' recordings: what the recordings hold is compared
            with open(rec + ".json", "w") as f:
                f.write(rep.stdout)
        elif not args.keep:
            os.unlink(rec)
    print("\n  ".join(line), flush=True)


def summary(workloads, configs, stats, rounds, shared_core):
    print("\n%d rounds%s; medians over rounds, 95%% interval in brackets (6 rounds at least)"
          % (rounds, ", bare and agprof side by side on one CPU, the launcher on the other" if shared_core else ""))
    print("| workload | config | %s | program cpu ratio | launcher cpu / bare cpu | finish s (its cpu) | MB | kernel rows"
          " | first calls' cpu / bare | recorded tracing / bare tracing | the same in cpu |"
          % ("2-core wall ratio" if shared_core else "wall ratio"))
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for w in workloads:
        for c in configs:
            st = stats[(w, c)]
            print("| %s | %s | %s | %s | %s | %s (%s) | %.1f | %d | %s | %s | %s |"
                  % (w, c, fmt(st["wall"]), fmt(st["cpu"]), fmt(st["launcher"]), fmt(st["finish"], 2),
                     fmt([x for x in st["finish_cpu"] if x == x], 2),
                     statistics.median(st["mb"]), statistics.median(st["kernels"]), fmt(st["first_ratio"]),
                     fmt([x for x in st["recorded"] if x == x]), fmt([x for x in st["recorded_cpu"] if x == x])))


if __name__ == "__main__":
    main()
