"""The same program recorded three times gives the same findings (issue 46).

Usage: python3 bench/corpus_stability.py [--runs N] [--hog] [PROGRAM...]
       (AGPROF: the agprof binary, default build/cmd/agprof/agprof;
        PYTHON: the interpreter, default .venv/bin/python)

Records each program of tests/corpus/ (all of them by default) N times (3),
one run at a time, and prints a Markdown table: per program the findings
each run gave, as (rule, function, line, severity), whether every run gave
the same set, and each finding's estimate (its claimed saving, else its
forecast, else its cost) as the spread max/min over the runs, which the
issue's target keeps within +-30% (a ratio under 1.3 and above 1/1.3 of the
middle one).  Borderline findings (info, said so) count as what they are.
--hog records beside a CPU hog (a busy process per CPU, and one).
Exit status 0 when every program's findings agree and every estimate is
within the bound, 1 otherwise.  Not a test: it takes minutes per program.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AGPROF = os.environ.get("AGPROF", os.path.join(ROOT, "build", "cmd", "agprof", "agprof"))
PYTHON = os.environ.get("PYTHON", os.path.join(ROOT, ".venv", "bin", "python"))
CORPUS = os.path.join(ROOT, "tests", "corpus")
BOUND = 1.3


def programs(names):
    if names:
        return names
    return sorted(f[:-3] for f in os.listdir(CORPUS) if f.endswith(".py") and
                  os.path.exists(os.path.join(CORPUS, f[:-3] + ".expect")))


def record(name, tmp, i):
    """One recording of the program in a copy of its own; its findings from report's JSON."""
    d = os.path.join(tmp, "%s-%d" % (name, i))
    os.makedirs(d)
    shutil.copy(os.path.join(CORPUS, name + ".py"), d)
    rec = os.path.join(d, "r.agprof")
    p = subprocess.run([AGPROF, "run", "-q", "-o", rec, "--", PYTHON, name + ".py"], cwd=d,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=900)
    if p.returncode != 0:
        return None
    p = subprocess.run([AGPROF, "report", "--format", "json", rec], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=600)
    if p.returncode != 0:
        return None
    out = {}
    for f in json.loads(p.stdout)["findings"]:
        loc = f.get("location") or {}
        key = (f["rule"], f.get("function") or "-", loc.get("line") or 0, f["severity"])
        est = f.get("saving_ns") or f.get("forecast_ns") or f.get("cost_ns") or 0
        out[key] = out.get(key, 0) + est
    return out


def hogs():
    n = (os.cpu_count() or 1) + 1
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--hog", action="store_true")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    busy = hogs() if a.hog else []
    ok = True
    print("| program | findings (rule function line severity) | same in all %d runs | estimates max/min |" % a.runs)
    print("|---|---|---|---|")
    try:
        with tempfile.TemporaryDirectory(prefix="agprof-stability-") as tmp:
            for name in programs(a.names):
                runs = [record(name, tmp, i) for i in range(a.runs)]
                if any(r is None for r in runs):
                    print("| %s | a run failed | no | - |" % name)
                    ok = False
                    continue
                keys = sorted(set().union(*runs))
                same = all(set(r) == set(runs[0]) for r in runs)
                spreads = []
                for k in keys:
                    vals = [r[k] for r in runs if r.get(k)]
                    if len(vals) == a.runs and min(vals) > 0:
                        spreads.append(max(vals) / min(vals))
                worst = max(spreads) if spreads else 1.0
                ok &= same and worst <= BOUND * BOUND
                shown = "<br>".join("%s %s :%s %s%s" % (k[0], k[1], k[2], k[3],
                                                         "" if all(k in r for r in runs) else
                                                         " (%d of %d)" % (sum(k in r for r in runs), a.runs))
                                    for k in keys) or "none"
                print("| %s | %s | %s | %s |" % (name, shown, "yes" if same else "**no**",
                                                 "%.2f" % worst if spreads else "-"), flush=True)
    finally:
        for h in busy:
            h.kill()
            h.wait()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
