"""agprof top on real runs: live in tmux, --once against agprof report, errors.

usage: test_top.py CASE      (CASE: live, attach, once, errors)

live: `agprof run` on samples/retrace_live.py, which retraces `step` every
half second and prints the CLOCK_MONOTONIC time of each retrace; `agprof
top` follows it in two tmux panes, one on the recording's name (its hidden
file while the run goes on), one on the workload's PID.  Every retrace must
be on both screens (that one or a newer one, with its cause) within two
seconds of the program printing it; q quits.  attach: the same program
without agprof: `agprof top PID` attaches, shows a retrace, and q lets the
program go on (it ends with TensorFlow's own trace count, as without
agprof).  once: `agprof top --once` on a finished recording prints what
`agprof report --format json` says.  errors: one line and the documented
exit code for each bad input.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from agtestlib import AGPROF, PYTHON, check, check_eq, fail, finish, agprof, need_agprof, sample, tmpdir  # noqa: E402

SOCK = "agprof-top-test-%d" % os.getpid()
RETRACE = re.compile(r"newest retrace: step, .* ago: shape: x: \[(\d+),8\] -> \[(\d+),8\]")


def tmux(*args, check_rc=True):
    p = subprocess.run(["tmux", "-L", SOCK] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if check_rc and p.returncode:
        fail("tmux %s: %s" % (" ".join(args), p.stderr.decode()))
    return p.stdout.decode("utf-8", "replace")


class Program:
    """A run of retrace_live.py; .retraces: {batch: CLOCK_MONOTONIC ns of its retrace}."""

    def __init__(self, argv, cwd):
        self.retraces, self.lines = {}, []
        self.p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        for line in self.p.stdout:
            self.lines.append(line)
            m = re.match(r"retrace \d+ at (\d+) batch (\d+)", line)
            if m:
                self.retraces[int(m.group(2))] = int(m.group(1))

    def wait(self, timeout=120):
        rc = self.p.wait(timeout=timeout)
        self.t.join(5)
        return rc


def wait_for(cond, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return False


def children_of(pid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(d))
            except (OSError, IndexError, ValueError):
                pass
    return out


def watch(panes, prog, seconds):
    """Capture the panes every 0.1 s: {pane: {batch shown: monotonic ns when first seen}}."""
    seen = {p: {} for p in panes}
    end = time.monotonic() + seconds
    while time.monotonic() < end and prog.p.poll() is None:
        for p in panes:
            now = time.monotonic_ns()
            m = RETRACE.search(tmux("capture-pane", "-p", "-t", p, check_rc=False))
            # [B-1,8] -> [B,8]; anything else is a capture in the middle of a redraw
            if m and int(m.group(2)) == int(m.group(1)) + 1:
                seen[p].setdefault(int(m.group(2)), now)
        time.sleep(0.1)
    return seen


def check_latency(name, seen, prog, until_ns):
    """Every retrace printed before until_ns is on screen (it or a newer one) within 2 s."""
    shown = sorted(seen.items())
    checked, worst = 0, 0
    for batch, t in sorted(prog.retraces.items()):
        if t > until_ns or batch < min(seen, default=1 << 30):
            continue
        first = min((ts for b, ts in shown if b >= batch), default=None)
        if check(first is not None, "%s: retrace to batch %d never shown" % (name, batch)):
            worst = max(worst, first - t)
            check(first - t < 2_000_000_000, "%s: retrace to batch %d shown %.2f s after it (bound 2 s)"
                  % (name, batch, (first - t) / 1e9))
        checked += 1
    check(checked >= 4, "%s: retraces followed (at least 4)" % name, checked, ">= 4")
    print("%s: %d retraces followed, shown at most %.2f s after they happened" % (name, checked, worst / 1e9))


def quit_pane(pane):
    tmux("send-keys", "-t", pane, "q")
    gone = wait_for(lambda: pane not in tmux("list-panes", "-a", "-F", "#{pane_id}", check_rc=False), 3)
    check(gone, "q quits agprof top (%s)" % pane)


def start_top(args, first=True):
    cmd = " ".join([AGPROF, "top"] + args)
    if first:
        tmux("new-session", "-d", "-x", "140", "-y", "32", "-P", "-F", "#{pane_id}", cmd)
        return tmux("list-panes", "-a", "-F", "#{pane_id}").split()[-1]
    return tmux("split-window", "-d", "-v", "-P", "-F", "#{pane_id}", cmd).strip()


def case_live(work):
    out = os.path.join(work, "live.agprof")
    prog = Program([AGPROF, "run", "-q", "-o", out, "--", PYTHON, sample("retrace_live.py"), "--seconds", "16"],
                   work)
    # the workload is agprof's child; its first retrace says TensorFlow runs
    check(wait_for(lambda: prog.retraces, 90), "the program retraced")
    kids = children_of(prog.p.pid)
    check(len(kids) >= 1, "agprof run's workload found", kids, "a child")
    # not a terminal: plain text, one frame per refresh
    rc, text, err = agprof("top", "-n", "2", "-d", "0.5", out, timeout=30)
    check_eq(rc, 0, "agprof top -n 2 (plain text) exit status (%s)" % err.strip())
    check_eq(len(re.findall(r"^agprof top - .* - live, refresh", text, re.M)), 2, "two live frames of plain text")
    check(re.search(r"^step +\d+ +\d+ ", text, re.M), "the frames show step's traces", text)
    panes = [start_top([out])]
    if kids:
        panes.append(start_top([str(kids[0])], first=False))
    seen = watch(panes, prog, 12)
    stop = time.monotonic_ns()
    for p in panes:
        check_latency("pane " + p, seen[p], prog, stop - 2_000_000_000)
    check_eq(prog.wait(), 0, "agprof run's exit status")
    # the run's end: the view follows the hidden file to its name and reads the whole run
    # (a capture can fall in the middle of a redraw: wait for the whole frame, title to status line)
    def ended_frame(p):
        screen = tmux("capture-pane", "-p", "-t", p, check_rc=False)
        return "the run ended" in screen and "whole run:" in screen and "the run ended: q quits" in screen
    for p in panes:
        check(wait_for(lambda: ended_frame(p), 10), "pane %s says the run ended, with its totals" % p,
              tmux("capture-pane", "-p", "-t", p, check_rc=False))
    for p in panes:
        quit_pane(p)
    # a reader that closes between refreshes leaves the launcher's finish as it is: no WAL left
    check(os.path.exists(out) and not os.path.exists(out + "-wal"), "the recording, folded back", os.listdir(work))
    rc, _, err = agprof("report", out)
    check_eq(rc, 0, "agprof report on it (%s)" % err.strip())
    check("tracing count:" in "".join(prog.lines), "the program ran to its end")


def case_attach(work):
    out = os.path.join(work, "attached.agprof")
    prog = Program([PYTHON, sample("retrace_live.py"), "--seconds", "18"], work)
    check(wait_for(lambda: prog.retraces, 90), "the program retraced")
    pane = start_top(["-o", out, str(prog.p.pid)])
    seen = watch([pane], prog, 10)
    check(len(seen[pane]) >= 2, "retraces shown after attaching", sorted(seen[pane]), ">= 2 batches")
    quit_pane(pane)
    check(wait_for(lambda: os.path.exists(out), 30), "detaching leaves the recording %s" % out)
    check_eq(prog.wait(), 0, "the program's exit status after top detached")
    last = [l for l in prog.lines if l.startswith("tracing count:")]
    check(last and int(last[0].split()[-1]) == len(prog.retraces),
          "TensorFlow's trace count equals the retraces printed", last, len(prog.retraces))


def case_once(work):
    out = os.path.join(work, "done.agprof")
    rc, _, err = agprof("run", "-q", "-o", out, "--", PYTHON, sample("retrace_live.py"), "--seconds", "4")
    check_eq(rc, 0, "agprof run: " + err[-300:])
    rc, text, err = agprof("top", "--once", out)
    check_eq(rc, 0, "agprof top --once exit status (%s)" % err)
    rc, again, _ = agprof("top", "-n", "3", "-d", "0.2", out)
    check(rc == 0 and again.count("agprof top - ") == 1, "a finished recording is shown once, -n or not", again)
    rc, js, _ = agprof("report", "--format", "json", out)
    rep = json.loads(js)
    s = rep["session"]
    check("the run ended" in text.splitlines()[0], "the title says the run ended", text.splitlines()[0])
    m = re.search(r"whole run: (\d+) traces  (\d+) graph calls  eager share ([\d.]+)%  input wait .* \((\d+) reads\)",
                  text)
    if check(m is not None, "a whole-run line", text, "whole run: ..."):
        check_eq(int(m.group(1)), s["traces"], "traces, as agprof report")
        check_eq(int(m.group(2)), s["function_calls"], "graph calls, as agprof report")
        check_eq(m.group(3), "%.1f" % (100 * s["eager_share"]), "eager share, as agprof report")
        check_eq(int(m.group(4)), s["input_waits"], "input waits, as agprof report")
    step = [f for f in rep["functions"] if f["name"] == "step"]
    m = re.search(r"^step +(\d+) +(\d+) ", text, re.M)
    if check(m is not None and step, "the function row of step", text):
        check_eq(int(m.group(1)), step[0]["traces"], "step's traces, as agprof report")


def case_errors(work):
    garbage = os.path.join(work, "garbage.agprof")
    with open(garbage, "w") as f:
        f.write("not a recording\n")
    for args, code, words in (
            (["999999999"], 4, "no such process: 999999999"),
            ([garbage], 2, "is not an agprof recording"),
            ([os.path.join(work, "missing.agprof")], 2, "cannot open"),
            (["--no-attach", str(os.getpid())], 4, "has no recording in progress"),
            (["-d", "0", garbage], 2, "--delay"),
            ([], 2, "needs one RECORDING or PID")):
        rc, out, err = agprof("top", *args, timeout=30)
        check_eq(rc, code, "agprof top %s: exit status" % " ".join(args))
        lines = err.strip().splitlines()
        check(len(lines) == 1 and words in lines[0], "agprof top %s: one error line" % " ".join(args), err, words)
        check_eq(out, "", "agprof top %s: nothing on stdout" % " ".join(args))


def main():
    need_agprof(tensorflow=True)
    name = sys.argv[1]
    if name in ("live", "attach") and not shutil.which("tmux"):
        print("SKIP: no tmux")
        sys.exit(77)
    work = tmpdir("agprof-top-")
    try:
        {"live": case_live, "attach": case_attach, "once": case_once, "errors": case_errors}[name](work)
    finally:
        subprocess.run(["tmux", "-L", SOCK, "kill-server"], stderr=subprocess.DEVNULL)
    finish("top-" + name)


if __name__ == "__main__":
    main()
