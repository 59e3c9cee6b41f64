#!/usr/bin/env python3
"""A long eager run, bare and under `agprof run` with default settings, side by side.

Runs bench/eager_loop.py (the eager-heavy sample's loop of 4 tiny eager ops)
for --ops ops, bare and under agprof, alternating, --rounds times each in
this one invocation (both see the same machine load), and prints per round
and as medians:
  - the whole-run wall-time ratio (agprof / bare), TensorFlow's start-up and
    the recording's finish included (issue 11's target: <= 1.02);
  - the program's CPU ratio: its CPU seconds (user + system, getrusage of
    the children less the launcher's own) under agprof over the bare run's,
    start-up and exit included: CPU time leaves out the time the
    hypervisor takes the CPUs away (the steal column of /proc/stat).  On
    this shared VM it moved with the wall ratio (6 rounds of 600,000 ops:
    0.92 to 1.07, within 0.006 of it each time), so the 10% by which runs
    differ is the CPUs running slower, not taken away;
  - the recording's size, and bytes per recorded event with the table and
    each index apart (sqlite3's dbstat; issue 11's target: <= 32 bytes per
    kept event, indexes included);
  - the launcher's own CPU per recorded event (getrusage of agprof itself,
    printed with AGPROF_TIMING=1: the program's CPU is not in it; target
    <= 0.5 us) and how long the recording's finish took after the program
    ended (index building, links, the WAL folded back).
Say the machine's load beside the figures: `uptime` is printed first and last.
With 6 rounds or more it also prints a 95% interval for the median wall
ratio (order statistics, no assumption on the spread): the target is shown
when the interval's top is at most 1.02.

With --baseline PATH (another build's agprof, e.g. of the commit before a
change), each round also runs it, so both agprof builds are compared with
the same bare runs under the same load.

Past the budget (default 1 million events, schema 5) eager ops are kept as
aggregates: bytes are per event kept as a row and per event that ran, CPU is
per event that ran.  To compare with every op a row, pass --baseline a
script that runs this agprof with --max-events 0.

With --pin the workload (every thread of it) runs on CPU 0 and agprof's
launcher on CPU 1 (taskset), bare runs too: on the shared 2-core machine the
unpinned runs move by several percent from process to process, more than
the 2% to be shown; the launcher's CPU is measured apart either way.

With --concurrent each round runs the bare program and the one under agprof
at the same time, one per CPU.  On this VM a program's speed drifts by
10-40% between runs seconds apart, but two copies running side by side
drift together (two bare copies: within 4% of each other).  There is no
third CPU for agprof's launcher, so it takes turns: in odd rounds it shares
the agprof program's CPU, in even ones the bare program's (the CPUs are
swapped every 2 rounds, which program starts first every 4).  Per round
the "own core" wall ratio takes the launcher's CPU time while the program
ran (its CPU less the finish's wall time) off the side it ran on: off the
agprof run's wall, or off the bare run's.  What remains of sharing a core
(switches, caches refilled) slows the agprof program in odd rounds and the
bare one in even rounds: the geometric mean of two rounds in a row (a
"pair") cancels it, and is the figure for a 2-core machine whose second
core runs the launcher (as --pin does), start-up and finish included.  The
same is printed for the timed loop's CPU ratio (eager_loop.py's main
thread).  The 95% interval is over pairs: 12 rounds at least.
With --control, each round also runs two bare copies side by side (the
CPUs swapped likewise): the spread of their ratio is the method's own noise.
--baseline is not combined with --concurrent.

With --shared-core each round runs the bare program and the one under
agprof at the same time on one CPU (every thread of both), and agprof's
launcher alone on the other: the scheduler interleaves the two programs
every few milliseconds, so both see the VM at the same speed, and the
launcher has a CPU of its own as on any 2-core machine.  The figures are
CPU times: the program's whole CPU under agprof (the launcher's apart) over
the bare program's, start-up and exit included, and the same for the timed
loop; "2-core wall ratio" adds the recording's finish (on the wall's
critical path) to the agprof side.  Both programs share the CPU's caches,
so what the collector evicts slows the bare program too: a cache effect
shows less here than it is.  The CPUs are swapped every 2 rounds; with
--control two bare copies share a CPU the same way.

usage: bench/long_run.py [--rounds N] [--ops N] [--pin | --concurrent [--control] | --shared-core [--control]] [--python PY] [--agprof PATH]
                         [--baseline PATH] [--keep DIR]
"""
import argparse
import math
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import tempfile

from benchlib import pinned, run_checked, run_side_by_side

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMING = re.compile(r"agprof: timing: launcher cpu ([0-9.]+) s .* finish ([0-9.]+) s")


def run(cmd, env=None):
    """(wall seconds, CPU seconds of cmd and its descendants, stderr)."""
    wall, out = run_checked(cmd, env)
    return wall, out.cpu, out.stderr


def median_interval(values, level=0.95):
    """A distribution-free interval for the median of values (order statistics: the median lies between the k-th
    smallest and the k-th largest with probability >= level for the largest such k), or None for too few values."""
    x, n = sorted(values), len(values)
    below, k = 0.0, 0
    while True:  # the chance that fewer than k+1 values fall below the median
        below += math.comb(n, k) / 2 ** n
        if below > (1 - level) / 2:
            break
        k += 1
    return (x[k - 1], x[n - k]) if k >= 1 else None


def storage(path):
    """(events kept as rows, events that ran, {table or index: bytes}, dropped) of a recording:
    past the budget (schema 5) eager ops are counts in eager_op_buckets, not rows (schema 7: graph calls and
    black-box runs in function_call_buckets, blackbox_buckets)."""
    with sqlite3.connect(path) as db:
        events = sum(db.execute("SELECT count(*) FROM %s" % t).fetchone()[0]
                     for t in ("eager_ops", "function_calls", "blackbox_execs", "session_runs"))
        ran = events
        for t in ("eager_op_buckets", "function_call_buckets", "blackbox_buckets"):
            if db.execute("SELECT 1 FROM sqlite_schema WHERE name = ?", (t,)).fetchone():
                ran += db.execute("SELECT coalesce(sum(count), 0) FROM %s" % t).fetchone()[0]
        sizes = dict(db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"))
        dropped = int(db.execute("SELECT value FROM meta WHERE key = 'dropped_events'").fetchone()[0])
    return events, ran, sizes, dropped


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ops", type=int, default=20000000)
    ap.add_argument("--python", default=os.path.join(ROOT, ".venv", "bin", "python"))
    ap.add_argument("--agprof", default=os.path.join(ROOT, "build", "cmd", "agprof", "agprof"))
    ap.add_argument("--baseline", help="another agprof build to run beside it in each round")
    ap.add_argument("--keep", help="keep the recordings in this directory")
    ap.add_argument("--pin", action="store_true", help="the workload on CPU 0, agprof's launcher on CPU 1")
    ap.add_argument("--concurrent", action="store_true", help="bare and agprof runs side by side, one per CPU")
    ap.add_argument("--shared-core", action="store_true",
                    help="bare and agprof programs side by side on one CPU, the launcher on the other")
    ap.add_argument("--control", action="store_true", help="with --concurrent or --shared-core: two bare copies too")
    args = ap.parse_args()
    if (args.concurrent or args.shared_core) and (args.pin or args.baseline or args.concurrent == args.shared_core):
        ap.error("--concurrent and --shared-core pin by themselves, one of them, and compare one build")
    if args.control and not (args.concurrent or args.shared_core):
        ap.error("--control goes with --concurrent or --shared-core")
    sample = [args.python, os.path.join(ROOT, "bench", "eager_loop.py"), str(args.ops)]
    program, launcher = pinned(args.pin)
    sample = program + sample
    tmp = args.keep or tempfile.mkdtemp(prefix="agprof-longrun-")
    os.makedirs(tmp, exist_ok=True)
    try:
        rounds(args, sample, launcher, tmp)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


def rounds(args, sample, launcher, tmp):
    """Every round of the method asked for, recordings in tmp; prints the figures."""
    env = dict(os.environ, AGPROF_TIMING="1")
    print_load()
    builds = [("agprof", args.agprof)] + ([("baseline", args.baseline)] if args.baseline else [])
    stats = {name: {"ratio": [], "prog_cpu": [], "bytes": [], "cpu": [], "finish": [], "mb": []}
             for name, _ in builds}
    if args.concurrent:
        concurrent_rounds(args, sample, tmp, env, stats["agprof"])
        return
    if args.shared_core:
        shared_core_rounds(args, sample, tmp, env, stats["agprof"])
        return
    for r in range(args.rounds):
        # the bare run first in even rounds, last in odd ones: a load that drifts during a round favours neither
        if r % 2 == 0:
            bare = run(sample)[:2]
        runs = []
        for name, exe in builds:
            out = os.path.join(tmp, "%s%d.agprof" % (name, r))
            runs.append((name, out, run(launcher + [exe, "run", "-q", "-f", "-o", out, "--"] + sample, env=env)))
        if r % 2 == 1:
            bare = run(sample)[:2]
        for name, out, (wall, cpu, err) in runs:
            measure(name, r, bare, (wall, cpu), err, out, args.keep, stats[name])
    print("%d rounds of %d eager ops%s" % (args.rounds, args.ops,
                                           ", workload on CPU 0, launcher on CPU 1" if args.pin else ""))
    for name, _ in builds:
        st = stats[name]
        print_interval(name + ": the median wall ratio", st["ratio"])
        print("%s: median whole-run wall ratio %.3f (target <= 1.02), program cpu ratio %.3f; recording %.1f MB,"
              " %.1f bytes per event with indexes (target <= 32); launcher cpu %.2f us per event (target <= 0.5);"
              " finish %.2f s"
              % (name, statistics.median(st["ratio"]), statistics.median(st["prog_cpu"]), statistics.median(st["mb"]),
                 statistics.median(st["bytes"]), statistics.median(st["cpu"]), statistics.median(st["finish"])))
    print_load()


def print_load():
    """The machine's load, to say beside the figures (printed first and last)."""
    print("load:", subprocess.run(["uptime"], stdout=subprocess.PIPE, text=True).stdout.strip())


def print_interval(what, values):
    ci = median_interval(values)
    print("%s's 95%% interval: %s" % (what, "%.3f to %.3f" % ci if ci else "too few values (6 at least: rounds, or pairs of rounds)"))


def side_by_side(swap, first, second, env=None):
    """run_side_by_side of the two commands, second started first when swap (the copy started second was the faster
    in some short runs: the order is swapped like the CPUs); results in the order given."""
    if swap:
        return run_side_by_side([second, first], env)[::-1]
    return run_side_by_side([first, second], env)


LOOP = re.compile(r"loop cpu ([0-9.]+) wall ([0-9.]+)")


def loop_cpu_ratio(bare, timed):
    """--concurrent: the timed loop's CPU ratio (eager_loop.py's main thread: the launcher's time is not in it),
    from the two programs' output, or None."""
    b, a = LOOP.search(bare[2]), LOOP.search(timed[2])
    return float(a.group(1)) / float(b.group(1)) if a and b else None


def concurrent_rounds(args, sample, tmp, env, st):
    """--concurrent: each round the bare program and the one under agprof side by side, one per CPU; the launcher
    on the agprof program's CPU in odd rounds, on the bare program's in even ones; the CPUs swapped every 2 rounds,
    which starts first every 4; with --control two bare copies side by side as well."""
    control, pairs, by_side = [], {"own": [], "loop": []}, {"agprof": [], "bare": []}
    last = None
    for r in range(args.rounds):
        launcher_with = "agprof" if r % 2 == 0 else "bare"
        cpu_bare, cpu_agprof = (0, 1) if r // 2 % 2 == 0 else (1, 0)
        cpu_launcher = cpu_agprof if launcher_with == "agprof" else cpu_bare
        out = os.path.join(tmp, "agprof%d.agprof" % r)
        bare, timed = side_by_side(r // 4 % 2, ["taskset", "-c", str(cpu_bare)] + sample,
                                   ["taskset", "-c", str(cpu_launcher), args.agprof, "run", "-q", "-f", "-o", out,
                                    "--", "taskset", "-c", str(cpu_agprof)] + sample, env)
        print("round %d: bare on CPU %d, agprof on CPU %d, its launcher beside the %s program, %s started first"
              % (r + 1, cpu_bare, cpu_agprof, launcher_with, "agprof" if r // 4 % 2 else "bare"))
        own = measure("agprof", r, bare[:2], timed[:2], timed[3], out, args.keep, st, launcher_with)
        by_side[launcher_with].append(own)
        loop = loop_cpu_ratio(bare, timed)
        print("  own core %.3f; the loop's cpu ratio %s" % (own, "%.3f" % loop if loop else "?"))
        if launcher_with == "bare" and last:  # this round and the one before: the launcher on either side
            pairs["own"].append(math.sqrt(own * last[0]))
            pair_loop = math.sqrt(loop * last[1]) if loop and last[1] else None
            if pair_loop:
                pairs["loop"].append(pair_loop)
            print("  pair %d (rounds %d-%d): own core %.3f, loop cpu %s"
                  % (len(pairs["own"]), r, r + 1, pairs["own"][-1], "%.3f" % pair_loop if pair_loop else "?"))
        last = (own, loop)
        if args.control:
            a, b = side_by_side(r // 4 % 2, ["taskset", "-c", str(cpu_bare)] + sample,
                                ["taskset", "-c", str(cpu_agprof)] + sample)
            control.append(b[0] / a[0])
            print("round %d control: two bare copies, CPU %d %.2f s, CPU %d %.2f s (ratio %.3f)"
                  % (r + 1, cpu_bare, a[0], cpu_agprof, b[0], control[-1]))
    concurrent_summary(args, st, pairs, by_side, control)


def concurrent_summary(args, st, pairs, by_side, control):
    print("%d rounds of %d eager ops, bare and agprof side by side" % (args.rounds, args.ops))
    for side, own in by_side.items():
        if own:
            print("launcher beside the %s program: median own-core wall ratio %.3f (%d rounds)"
                  % (side, statistics.median(own), len(own)))
    if pairs["own"]:
        print_interval("pairs: the median own-core wall ratio", pairs["own"])
        print("pairs: median own-core wall ratio %.3f (target <= 1.02)" % statistics.median(pairs["own"]))
    if pairs["loop"]:
        print_interval("pairs: the loop's median cpu ratio", pairs["loop"])
        print("pairs: the loop's median cpu ratio %.3f" % statistics.median(pairs["loop"]))
    if control:
        print_interval("control: the median ratio of two bare copies", control)
        print("control: median %.3f, from %.3f to %.3f" % (statistics.median(control), min(control), max(control)))
    print("recording %.1f MB, %.1f bytes per event with indexes (target <= 32); launcher cpu %.2f us per event"
          " (target <= 0.5); finish %.2f s"
          % (statistics.median(st["mb"]), statistics.median(st["bytes"]), statistics.median(st["cpu"]),
             statistics.median(st["finish"])))
    print_load()


def shared_core_rounds(args, sample, tmp, env, st):
    """--shared-core: each round the bare program and the one under agprof side by side on one CPU, the launcher on
    the other; the CPUs swapped every 2 rounds, which program starts first every other round; with --control two
    bare copies on one CPU as well."""
    figures = {"prog": [], "loop": [], "wall2": []}
    control = []
    for r in range(args.rounds):
        cpu_prog, cpu_launcher = (1, 0) if r // 2 % 2 == 0 else (0, 1)
        out = os.path.join(tmp, "agprof%d.agprof" % r)
        prog = ["taskset", "-c", str(cpu_prog)]
        bare, timed = side_by_side(r % 2, prog + sample,
                                   ["taskset", "-c", str(cpu_launcher), args.agprof, "run", "-q", "-f", "-o", out,
                                    "--"] + prog + sample, env)
        m = TIMING.search(timed[3])
        launcher_cpu, finish = (float(m.group(1)), float(m.group(2))) if m else (float("nan"), float("nan"))
        print("round %d: both programs on CPU %d, the launcher on CPU %d, %s started first"
              % (r + 1, cpu_prog, cpu_launcher, "agprof" if r % 2 else "bare"))
        measure("agprof", r, bare[:2], timed[:2], timed[3], out, args.keep, st)
        prog_cpu, loop = (timed[1] - launcher_cpu) / bare[1], loop_cpu_ratio(bare, timed)
        wall2 = (timed[1] - launcher_cpu + finish) / bare[1]
        figures["prog"].append(prog_cpu)
        figures["wall2"].append(wall2)
        if loop:
            figures["loop"].append(loop)
        print("  program cpu %.2f s against %.2f s: ratio %.3f; the loop's cpu ratio %s; 2-core wall ratio %.3f"
              % (timed[1] - launcher_cpu, bare[1], prog_cpu, "%.3f" % loop if loop else "?", wall2))
        if args.control:
            a, b = side_by_side(r % 2, prog + sample, prog + sample)
            control.append(b[1] / a[1])
            print("round %d control: two bare copies on CPU %d, %.2f and %.2f CPU s (ratio %.3f)"
                  % (r + 1, cpu_prog, a[1], b[1], control[-1]))
    print("%d rounds of %d eager ops, bare and agprof on one CPU, the launcher on the other" % (args.rounds, args.ops))
    for key, what in (("prog", "the program's cpu ratio"), ("loop", "the loop's cpu ratio"),
                      ("wall2", "the 2-core wall ratio (target <= 1.02)")):
        if figures[key]:
            print_interval(what, figures[key])
            print("%s: median %.3f" % (what, statistics.median(figures[key])))
    if control:
        print_interval("control: two bare copies' cpu ratio", control)
        print("control: median %.3f, from %.3f to %.3f" % (statistics.median(control), min(control), max(control)))
    print("recording %.1f MB, %.1f bytes per event with indexes (target <= 32); launcher cpu %.2f us per event"
          " (target <= 0.5); finish %.2f s"
          % (statistics.median(st["mb"]), statistics.median(st["bytes"]), statistics.median(st["cpu"]),
             statistics.median(st["finish"])))
    print_load()


def measure(name, r, bare, timed, err, out, keep, st, launcher_with=None):
    """The figures of round r's run under the agprof build name (bare and timed: (wall, CPU seconds) of the bare
    run and of this one; its stderr, recording out): appended to st.  Returns the own-core wall ratio: the
    launcher's CPU while the program ran (the finish is on the wall's critical path either way) taken off the side
    whose CPU it shared, launcher_with ("bare" with --concurrent; else the agprof run's)."""
    (bare, bare_cpu), (wall, run_cpu) = bare, timed
    m = TIMING.search(err)
    cpu = float(m.group(1)) if m else float("nan")
    prog_cpu = (run_cpu - cpu) / bare_cpu  # the program's own CPU: the launcher's apart
    finish = float(m.group(2)) if m else float("nan")
    events, ran, sizes, dropped = storage(out)
    size = os.path.getsize(out)
    st["ratio"].append(wall / bare)
    during = max(0.0, cpu - finish)
    own = wall / (bare - during) if launcher_with == "bare" else (wall - during) / bare
    st["prog_cpu"].append(prog_cpu)
    st["bytes"].append(size / max(1, events))
    st["cpu"].append(cpu * 1e6 / max(1, ran))  # the launcher handled every event, row or not
    st["finish"].append(finish)
    st["mb"].append(size / 1e6)
    parts = ", ".join("%s %.1f" % (k, v / max(1, events)) for k, v in
                      sorted(sizes.items(), key=lambda kv: -kv[1]) if v / max(1, events) >= 0.5)
    print("round %d %s: wall bare %.2f s, agprof %.2f s (ratio %.3f), program cpu ratio %.3f; %d events ran,"
          " %d kept as rows (%d dropped), %.1f MB, %.1f B/kept event (%s); %.1f B/event that ran;"
          " launcher cpu %.2f us/event that ran; finish %.2f s"
          % (r + 1, name, bare, wall, wall / bare, prog_cpu, ran, events, dropped, size / 1e6, st["bytes"][-1], parts,
             size / max(1, ran), st["cpu"][-1], finish))
    if not keep:
        os.unlink(out)
    return own


if __name__ == "__main__":
    main()
