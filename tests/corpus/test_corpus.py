"""agprof on real third-party code: one corpus program against its sidecar.

Usage: test_corpus.py PROGRAM [--long] [--experiment]   (e.g. keras_fit; tests/corpus/PROGRAM.py)

--long marks a program that runs only in the whole-corpus run (AGPROF_CORPUS_ALL=1,
which tests/corpus/table.py --run sets); elsewhere it is skipped (exit 77), as is a
program whose sidecar `needs` a module this Python cannot import.

Each program of tests/corpus/ drives a library built on TensorFlow (Keras,
TensorFlow Probability, GPflow, tf.data, tf.experimental.numpy) on small
synthetic data.  Its sidecar PROGRAM.expect (JSON, written before agprof ran
on the program; README.md) says what an expert expects:
- `expected`: findings that must be there (a finding matching one but
  for its line, level or advice is judged "partial": the right issue,
  said wrongly);
- `allowed`: true findings that may be there;
- `false_alarms`: findings that must not be there (a borderline finding,
  info because its measure sits within its own noise of the rule's
  threshold, claims nothing: it is unjudged, never a false alarm; a finding matching an
  expected or allowed entry is never counted as a false alarm);
- `fix`: whether `agprof fix` must print a diff (`diff`), whether the
  patched program prints the same (`keeps_output`), and which findings the
  patch must remove (`removes`, in the patched program's recording).
- `follow`: advice in words followed literally on a copy (`edits`: pairs of
  old and new text, written from what agprof advises): the copy must print
  the same and lose the findings in `removes`.
- an entry's `avoids`: strings that must not be in the finding's message,
  recommendation or no_edit (advice that cannot be followed there).
A finding matches an entry when each field the entry gives holds: `rule`
("*" for any), `function`, `cause`, `severity` (at least), `at` (the
location is this program's line marked `# corpus: NAME`), `not_at`,
`outside` (the location is not in this program: null or a library's),
`recommends` (one of the strings is in the message or recommendation).

The program is copied to a temporary directory and recorded there with
`agprof run`; the fix is applied with `patch -p1` to a second copy, which is
recorded again.  An entry with `known_failure` (a one-line reason; for the
fix, `known_failures` by key) is today's known failure: its failing is
reported as XFAIL; its passing fails the test (XPASS: remove the mark).
`known_flaky` instead marks a false alarm that comes and goes with the
machine's load (a threshold in milliseconds): reported, never failing.
With AGPROF_CORPUS_SUMMARY=DIR, DIR/PROGRAM.json gets the findings and
their judgement (tests/corpus/table.py makes README.md's table from them).

--experiment (the sidecar's `experiment` key; issue 46): every finding of
the recording that offers an experiment (compile-time or graph advice: its
JSON `experiment` command) goes through `agprof fix --verify`, and its
verdict (the report's JSON `verdict`) is checked against plain timed runs
made without agprof: the program and the copy that `agprof fix --rule R
--function F | patch -p1` edits, run by `python` in turn, `runs` times each
(default 2), timed by their CPU time (the children's rusage) when the
verdict's measure is the run's CPU time, else by the wall clock.  They agree
when a verified edit is faster in the plain runs (at their median and at the best run: each plain run
also imports TensorFlow, whose noise is as large as some savings) and prints the same, one refuted as slower or as no
measurable change is not faster so and by 5% or more at the median (the verdict's own line),
one refuted for its output prints otherwise, and one failed for its exit
status exits otherwise; "output identical" agrees with plain outputs that
are the same.  DIR/PROGRAM.experiment.json gets the figures.
"""
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import agtestlib  # noqa: E402
from agtestlib import check, fail  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RANK = {"info": 0, "warning": 1, "error": 2}
results = []  # (status, what): PASS, FAIL, XFAIL, XPASS


def verdict(ok, what, known, flaky=None):
    """One expectation's outcome; a known failure inverts what fails the test;
    a known flaky one (it depends on the machine's load) fails it neither way."""
    if flaky:
        results.append(("PASS" if ok else "XFAIL", what + " [known flaky: %s]" % flaky))
        return
    if known:
        status = "XPASS" if ok else "XFAIL"
        check(not ok, "%s: passes now; remove its known_failure mark (%s)" % (what, known))
    else:
        status = "PASS" if ok else "FAIL"
        check(ok, what)
    results.append((status, what + (" [known: %s]" % known if known else "")))


def markers(path):
    found = {}
    with open(path) as fh:
        for no, text in enumerate(fh, 1):
            m = re.search(r"#\s*corpus:\s*([\w-]+)", text)
            if m:
                found.setdefault(m.group(1), set()).add(no)
    return found


def at_line(f, prog, lines):
    loc = f.get("location")
    return bool(loc) and os.path.basename(loc["file"]) == prog and loc["line"] in lines


def matches(e, f, prog, marks):
    """Does finding f have every property entry e names?"""
    rule = e.get("rule", "*")
    if rule != "*" and f["rule"] not in ([rule] if isinstance(rule, str) else rule):
        return False
    for key in ("function", "cause"):
        if key in e and f.get(key) != e[key]:
            return False
    if RANK.get(f["severity"], 0) < RANK[e.get("severity", "info")]:
        return False
    if "at" in e and not at_line(f, prog, marks.get(e["at"], ())):
        return False
    if "not_at" in e and at_line(f, prog, marks.get(e["not_at"], ())):
        return False
    if e.get("outside"):
        loc = f.get("location")
        if loc and os.path.realpath(loc["file"]) == os.path.realpath(os.path.join(f["_dir"], prog)):
            return False
    text = " ".join(f.get(k) or "" for k in ("message", "recommendation", "no_edit")).lower()
    if "recommends" in e and not any(s.lower() in text for s in e["recommends"]):
        return False
    if "avoids" in e and any(s.lower() in text for s in e["avoids"]):
        return False
    return True


def near_miss(e, f, prog, marks):
    """Does f match e but for one of its line, level or advice (the right issue, said wrongly)?"""
    return any(matches({k: v for k, v in e.items() if k != drop}, f, prog, marks)
               for drop in ("at", "severity", "recommends", "avoids"))


def describe(f):
    loc = f.get("location")
    where = "%s:%d" % (os.path.basename(loc["file"]), loc["line"]) if loc else "-"
    lib = f.get("library_location")
    if lib:
        where += " (lib %s:%d)" % (os.path.basename(lib["file"]), lib["line"])
    return "%s %s%s %s at %s" % (f["severity"], f["rule"], "[%s]" % f["cause"] if f.get("cause") else "",
                                 f.get("function") or "-", where)


def record(d, prog, name):
    """Record d/prog with cwd d; return (program output lines, recording)."""
    out = os.path.join(d, name + ".agprof")
    env = dict(os.environ, PYTHONHASHSEED="0", TF_CPP_MIN_LOG_LEVEL="2")
    p = subprocess.run([agtestlib.AGPROF, "run", "-q", "-o", out, "--", agtestlib.PYTHON, prog],
                       cwd=d, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=280)
    if p.returncode != 0 or not os.path.exists(out):
        print(p.stderr.decode("utf-8", "replace")[-3000:])
        fail("%s exited %d under agprof (%s)" % (prog, p.returncode, name))
        agtestlib.finish("corpus " + prog)
    return p.stdout.decode("utf-8", "replace").splitlines(), out


def report(rec, d):
    rc, text, err = agtestlib.agprof("report", "--format", "json", rec, env_extra={"NO_COLOR": "1"})
    if rc != 0:
        fail("agprof report --format json exited %d: %s" % (rc, err.strip()[-500:]))
        agtestlib.finish("corpus")
    findings = json.loads(text)["findings"]
    for f in findings:
        f["_dir"] = d
    return findings


def judge(spec, findings, prog, marks):
    """Check expected, allowed and false alarms; return each finding's judgement."""
    judged = []
    for f in findings:
        kind = "unjudged"
        near = [e for e in spec["expected"] if near_miss(e, f, prog, marks)]
        named = [e for e in spec["false_alarms"] if e.get("rule", "*") != "*" and matches(e, f, prog, marks)]
        if near and all(matches(e, f, prog, marks) for e in near):
            kind = "true"
        elif named:  # a false alarm named by its rule, not the right issue said wrongly
            kind = "false alarm"
        elif near:
            kind = "partial"
        elif any(matches(e, f, prog, marks) for e in spec.get("allowed", [])):
            kind = "allowed"
        elif any(matches(e, f, prog, marks) for e in spec["false_alarms"]):
            kind = "false alarm"
        if kind == "false alarm" and f.get("borderline") == "fires":
            kind = "unjudged"  # info that says its measure is within its noise of the threshold: it claims nothing
        judged.append((f, kind))
    for e in spec["expected"]:
        hit = [f for f in findings if matches(e, f, prog, marks)]
        verdict(bool(hit), "expected %s (%s)" % (entry_text(e), e["why"]), e.get("known_failure"))
    for e in spec["false_alarms"]:
        bad = [describe(f) for f, kind in judged if kind in ("partial", "false alarm") and matches(e, f, prog, marks)]
        verdict(not bad, "no %s (%s)%s" % (entry_text(e), e["why"], ": got " + "; ".join(bad) if bad else ""),
                e.get("known_failure"), e.get("known_flaky"))
    return judged


def entry_text(e):
    keys = ("rule", "cause", "function", "severity", "at", "not_at")
    parts = ["%s=%s" % (k, e[k]) for k in keys if k in e]
    if e.get("outside"):
        parts.append("finding outside the program")
    return " ".join(parts) or "finding"


def compact(e):
    """An expected entry in a table's words: 'retracing[python-value] train_step @lr-call >=warning'."""
    rule = e.get("rule", "*")
    text = ("any rule" if rule == "*" else rule if isinstance(rule, str) else " or ".join(rule))
    text += "[%s]" % e["cause"] if "cause" in e else ""
    text += "".join(" " + p for p in (e.get("function"), "@" + e["at"] if "at" in e else None,
                                      ">=" + e["severity"] if "severity" in e else None) if p)
    if "recommends" in e:
        text += " advising " + " or ".join(repr(r) for r in e["recommends"])
    return text


def same_output(a, b):
    return [ln.rstrip() for ln in a] == [ln.rstrip() for ln in b]


def check_fix(spec, rec, prog, lines0, tmp):
    """agprof fix: a diff or none, as expected; applied to a copy, the same output and the removed findings."""
    fx = spec["fix"]
    known = fx.get("known_failures", {})
    rc, diff, err = agtestlib.agprof("fix", rec)
    verdict((rc == 0) == fx["diff"], "agprof fix %s (exit %d)" % ("prints a diff" if fx["diff"] else "has nothing to fix", rc),
            known.get("diff"))
    if rc != 0:
        return None
    print(diff)
    d1 = os.path.join(tmp, "patched")
    os.makedirs(d1)
    shutil.copy(os.path.join(HERE, prog), os.path.join(d1, prog))
    p = subprocess.run(["patch", "-p1"], input=diff.encode(), cwd=d1, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    check(p.returncode == 0, "patch -p1 applies agprof fix's diff", p.stdout.decode()[-500:])
    if p.returncode != 0:
        return None
    lines1, rec1 = record(d1, prog, "patched")
    verdict(same_output(lines0, lines1), "the patched program prints the same (before %r, after %r)" % (lines0, lines1),
            known.get("keeps_output"))
    after = report(rec1, d1)
    for e in fx.get("removes", []):
        left = [describe(f) for f in after if matches(e, f, prog, markers(os.path.join(d1, prog)))]
        verdict(not left, "the fix removes %s%s" % (entry_text(e), ": left " + "; ".join(left) if left else ""),
                known.get("removes"))
    return [describe(f) for f in after]


def check_follow(spec, rec, prog, lines0, tmp):
    """The advice in words followed literally on a copy (spec's follow.edits, each old text there exactly
    once, written from the advice agprof prints): the copy runs, prints the same, and the findings it
    promised to remove are gone; the two runs' recorded wall times are printed."""
    fw = spec["follow"]
    d2 = os.path.join(tmp, "followed")
    os.makedirs(d2)
    with open(os.path.join(HERE, prog)) as fh:
        text = fh.read()
    for old, new in fw["edits"]:
        check(text.count(old) == 1, "the advice's edit applies once: %r" % old)
        text = text.replace(old, new, 1)
    with open(os.path.join(d2, prog), "w") as fh:
        fh.write(text)
    lines2, rec2 = record(d2, prog, "followed")
    verdict(same_output(lines0, lines2), "the program with the advice followed prints the same (before %r, after %r)"
            % (lines0, lines2), fw.get("known_failure"))
    after = report(rec2, d2)
    for e in fw.get("removes", []):
        left = [describe(f) for f in after if matches(e, f, prog, markers(os.path.join(d2, prog)))]
        verdict(not left, "following the advice removes %s%s" % (entry_text(e), ": left " + "; ".join(left) if left
                                                                  else ""), fw.get("known_failure"))
    walls = [json.loads(agtestlib.agprof("report", "--format", "json", r)[1])["session"]["active_ns"] / 1e6
             for r in (rec, rec2)]
    print("followed %s: active time %.0f ms -> %.0f ms" % (fw["why"], walls[0], walls[1]))
    return [describe(f) for f in after]


def plain_run(d, prog):
    """prog run by python in d, without agprof: (wall seconds, CPU seconds, exit status, output lines)."""
    env = dict(os.environ, PYTHONHASHSEED="0", TF_CPP_MIN_LOG_LEVEL="2")
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.monotonic()
    p = subprocess.run([agtestlib.PYTHON, prog], cwd=d, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=280)
    wall = time.monotonic() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
    return wall, cpu, p.returncode, p.stdout.decode("utf-8", "replace").splitlines()


def plain_agrees(v, base, edited):
    """Whether verdict v (the report's JSON) says what the plain runs base and edited ((wall, cpu, status, lines)
    each) do, on the time its measure is (CPU time, else the wall time): (agrees, why)."""
    cpu = "CPU time" in (v.get("measure") or "")
    tb, te = [r[1 if cpu else 0] for r in base], [r[1 if cpu else 0] for r in edited]
    # Faster at the median and at the best run: "every pair" let the import's noise (a third of the run's
    # CPU time, and the same in both) outvote a saving fix --verify measured in every pair (CI, stop 52).
    faster = statistics.median(te) < statistics.median(tb) and min(te) < min(tb)
    clearly = faster and statistics.median(tb) - statistics.median(te) >= 0.05 * statistics.median(tb)
    same = all(same_output(base[0][3], r[3]) for r in base + edited)
    status = any(r[2] != base[0][2] for r in edited)
    reason = v.get("reason") or ""
    if v["verdict"] == "failed":
        return status or "exited" not in reason, "failed (%s); plain edited exit status %s" % (
            reason, [r[2] for r in edited])
    if (v.get("output") or "").startswith("identical") != same:
        return False, "verdict's output %r; plain outputs %s" % (v.get("output"), "the same" if same else "differ")
    what = "CPU time" if cpu else "wall time"
    if v["verdict"] == "verified":
        return faster and same, "verified; plain edited %s at the median and the best run (%s)" % (
            "faster" if faster else "not faster", what)
    if reason == "slower" or reason.startswith("no measurable change"):
        return not clearly, "refuted (%s); plain edited %s (%s)" % (
            reason, "faster by 5% or more" if clearly else "not clearly faster", what)
    return True, "refuted (%s): the plain runs have nothing to say on it" % reason


def try_experiment(f, rec, prog, tmp, runs):
    """One finding's experiment: fix --verify, then the plain runs of the same edit.  Its row, or None."""
    rc, diff, err = agtestlib.agprof("fix", "--rule", f["rule"], "--function", f["function"] or "", rec)
    if not check(rc == 0 and f.get("fix"), "%s offers an experiment with an edit to try (agprof fix exit %d: %s)"
                 % (describe(f), rc, err.strip()[-300:])):
        return None
    edited = os.path.join(tmp, "edited-%s" % f["rule"])
    os.makedirs(edited)
    shutil.copy(os.path.join(HERE, prog), os.path.join(edited, prog))
    p = subprocess.run(["patch", "-p1"], input=diff.encode(), cwd=edited, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    if not check(p.returncode == 0, "patch -p1 applies the experiment's edit", p.stdout.decode()[-300:]):
        return None
    env = dict(os.environ, PYTHONHASHSEED="0", TF_CPP_MIN_LOG_LEVEL="2", TMPDIR=tmp)
    t = time.monotonic()
    p = subprocess.run([agtestlib.AGPROF, "fix", "--verify", rec, "--rule", f["rule"], "--function",
                        f["function"] or "", "--runs", str(runs), "--time-limit", "240"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=290 * (2 * runs + 1))
    spent = time.monotonic() - t
    print(p.stdout.decode("utf-8", "replace") + p.stderr.decode("utf-8", "replace")[-1000:])
    after = [g for g in report(rec, f["_dir"]) if (g["rule"], g["function"], g["location"]) ==
             (f["rule"], f["function"], f["location"])]
    v = after[0]["verdict"] if after else None
    if not check(v is not None and p.returncode in (0, 1), "fix --verify (exit %d) leaves a verdict on %s" % (
            p.returncode, describe(f))):
        return None
    base, edit = [], []
    for _ in range(runs):  # in turn, as fix --verify runs them: a load that drifts slows both alike
        base.append(plain_run(os.path.dirname(rec), prog))
        edit.append(plain_run(edited, prog))
    agrees, why = plain_agrees(v, base, edit)
    return {"finding": describe(f), "advice": f["fix"]["after"].strip().splitlines()[0], "verdict": v,
            "verify_s": round(spent, 1), "plain_s": [round(r[0], 2) for r in base],
            "plain_edited_s": [round(r[0], 2) for r in edit], "plain_cpu_s": [round(r[1], 2) for r in base],
            "plain_edited_cpu_s": [round(r[1], 2) for r in edit], "agrees": agrees, "why": why,
            "load": round(os.getloadavg()[0], 1)}


def experiment_text(row):
    """One row of the experiments' table, in words."""
    v = row["verdict"]
    return ("%s: %s %s: %s %.2f s -> %.2f s, output %s (fix --verify took %.0f s); plain runs: wall %s s -> %s s,"
            " CPU %s s -> %s s (load %s): %s" % (
                row["finding"], row["advice"], v["verdict"] + (" (%s)" % v["reason"] if v.get("reason") else ""),
                v.get("measure"), v["base_ns"] / 1e9, v["new_ns"] / 1e9, v.get("output"), row["verify_s"],
                row["plain_s"], row["plain_edited_s"], row["plain_cpu_s"], row["plain_edited_cpu_s"], row["load"],
                ("agree" if row["agrees"] else "DISAGREE") + " (" + row["why"] + ")"))


def check_experiments(name, spec, prog, tmp):
    """--experiment: each finding offering an experiment, tried by fix --verify and by plain timed runs."""
    ex = spec["experiment"]
    d0 = os.path.join(tmp, "original")
    os.makedirs(d0)
    shutil.copy(os.path.join(HERE, prog), os.path.join(d0, prog))
    lines0, rec = record(d0, prog, "original")
    tried = [f for f in report(rec, d0) if f.get("experiment")]
    check(tried, "%s offers an experiment (%s)" % (prog, ex["why"]))
    rows = [r for r in (try_experiment(f, rec, prog, tmp, ex.get("runs", 2)) for f in tried) if r]
    for row in rows:
        print("experiment " + experiment_text(row))
        verdict(row["agrees"], "fix --verify's verdict agrees with plain timed runs: " + experiment_text(row),
                ex.get("known_failure"))
    for status, what in results:
        print("%-5s %s" % (status, what))
    if os.environ.get("AGPROF_CORPUS_SUMMARY"):
        with open(os.path.join(os.environ["AGPROF_CORPUS_SUMMARY"], name + ".experiment.json"), "w") as fh:
            json.dump({"program": prog, "experiments": rows, "results": results}, fh, indent=1)
    agtestlib.finish("corpus experiment " + prog)


def skip_unless_runnable(name, spec, long_one):
    """Exit 77 (meson's skip) for a long program outside the whole-corpus run, or one whose library
    ./setup could not install (the sidecar's `needs`: modules to import)."""
    if long_one and not os.environ.get("AGPROF_CORPUS_ALL"):
        print("skip corpus %s: a long program, run with AGPROF_CORPUS_ALL=1 (tests/corpus/table.py --run)" % name)
        sys.exit(77)
    for module in spec.get("needs", []):
        p = subprocess.run([agtestlib.PYTHON, "-c", "import " + module], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        if p.returncode != 0:
            print("skip corpus %s: no %s module in %s (./setup installs it)" % (name, module, agtestlib.PYTHON))
            sys.exit(77)


def main():
    args = [a for a in sys.argv[1:] if a not in ("--long", "--experiment")]
    if len(args) != 1:
        agtestlib.die("usage: test_corpus.py PROGRAM [--long] [--experiment]")
    name = args[0]
    prog = name + ".py"
    agtestlib.need_agprof(tensorflow=True)
    with open(os.path.join(HERE, name + ".expect")) as fh:
        spec = json.load(fh)
    skip_unless_runnable(name, spec, "--long" in sys.argv[1:])
    marks = markers(os.path.join(HERE, prog))
    tmp = agtestlib.tmpdir("agprof-corpus-")
    if "--experiment" in sys.argv[1:]:
        check_experiments(name, spec, prog, tmp)
    d0 = os.path.join(tmp, "original")
    os.makedirs(d0)
    shutil.copy(os.path.join(HERE, prog), os.path.join(d0, prog))
    lines0, rec = record(d0, prog, "original")
    print("\n".join(lines0))
    findings = report(rec, d0)
    judged = judge(spec, findings, prog, marks)
    offered = [describe(f) for f, kind in judged if f.get("experiment") and kind in ("true", "allowed", "partial")]
    verdict(not offered or "experiment" in spec, "every experiment offered is tried (the sidecar's experiment key:"
            " test_corpus.py --experiment)%s" % (": " + "; ".join(offered) if offered else ""), None)
    after = check_fix(spec, rec, prog, lines0, tmp)
    if "follow" in spec:
        check_follow(spec, rec, prog, lines0, tmp)
    print("findings of %s:" % prog)
    for f, kind in judged:
        print("  %-11s %s" % (kind, describe(f)))
    for status, what in results:
        print("%-5s %s" % (status, what))
    if os.environ.get("AGPROF_CORPUS_SUMMARY"):
        summary = {"program": prog, "project": spec["project"], "kind": spec["kind"],
                   "severities": [f["severity"] for f, _ in judged],
                   "expected": [compact(e) for e in spec["expected"]],
                   "missed": [compact(e) for e in spec["expected"]
                              if not any(matches(e, f, prog, marks) for f in findings)],
                   "findings": [{"text": describe(f), "judgement": k} for f, k in judged],
                   "after_fix": after, "results": results}
        with open(os.path.join(os.environ["AGPROF_CORPUS_SUMMARY"], name + ".json"), "w") as fh:
            json.dump(summary, fh, indent=1)
    agtestlib.finish("corpus " + prog)


if __name__ == "__main__":
    main()
