"""The corpus's tables for README.md, from the summaries test_corpus.py wrote.

Usage: python3 tests/corpus/table.py --run [BUILD]   (records the whole corpus, long programs
                                                       included, then prints both tables)
       AGPROF_CORPUS_SUMMARY=DIR meson test -C build --suite corpus
       python3 tests/corpus/table.py DIR              (prints both tables from DIR)

The precision table: per program the findings at warning or above and at
info, their judgements (TP: true, or allowed; TP*: partial, the right issue
at the wrong line, level or advice; FP: false alarm; unjudged: a finding no
sidecar entry speaks of), the edits `agprof fix` printed (tried) and those
whose patched program printed the same and lost the findings it promised to
remove (kept), and the advice in words that could not be followed (the
sidecar's `follow` checks that failed), and the experiments (issue 46:
`test_corpus.py --experiment`, whose summaries are PROGRAM.experiment.json):
fix --verify's verdict on each compile-time or graph advice and whether
plain timed runs of the same edit agree; then the totals and the precision:
TP over all findings at warning or above, and a table of the experiments.
The detailed table: one row per program: what an expert expects, what agprof
finds today and the judgement of each finding, the misses, and what
`agprof fix` did.  The totals close it.
"""
import json
import os
import subprocess
import sys
import tempfile


def cell(items):
    return "<br>".join(items) if items else "-"


def short(text, prog):
    """'warning retracing[shape] f at prog.py:25' as 'W retracing[shape] f :25'."""
    sev, rest = text.split(" ", 1)
    return sev[0].upper() + " " + rest.replace(" at " + prog + ":", " :")


def fix_cell(results):
    """What agprof fix did: no diff, or a diff and whether the patched program kept its output."""
    out = []
    for status, what in results:
        if what.startswith("agprof fix"):
            printed = "(exit 0)" in what
            expected = "prints a diff" in what
            out.append(("diff" if printed else "no diff") + ("" if printed == expected else
                                                            " (one expected)" if expected else " (none expected)"))
        elif what.startswith("the patched"):
            out.append("output kept" if status in ("PASS", "XPASS") else "output CHANGED")
        elif what.startswith("the fix removes"):
            out.append("finding gone" if status == "PASS" else "finding stays")
    return ", ".join(out) or "-"


def load(d):
    """The summaries of directory d, by program name, and the experiments' by program."""
    out, experiments = [], {}
    for name in sorted(os.listdir(d)):
        if name.endswith(".json"):
            with open(os.path.join(d, name)) as fh:
                s = json.load(fh)
            if name.endswith(".experiment.json"):
                experiments[s["program"]] = s
            else:
                out.append(s)
    return out, experiments


def experiment_cell(e):
    """A program's experiments in a few words: 'verified, agrees'; '-' when none ran."""
    if not e:
        return "-"
    rows = e["experiments"]
    if not rows:
        return "not tried"
    return "; ".join("%s%s, %s" % (r["verdict"]["verdict"], " (%s)" % r["verdict"]["reason"] if
                                   r["verdict"].get("reason") else "", "agrees" if r["agrees"] else "DISAGREES")
                     for r in rows)


def experiment_table(experiments):
    """One row per experiment: the advice, fix --verify's verdict and times, the plain runs, agreement."""
    rows = [(prog, r) for prog in sorted(experiments) for r in experiments[prog]["experiments"]]
    if not rows:
        return
    print("| program | advice | fix --verify (its measure: as it is -> edited) | plain runs' wall time, s (as it is;"
          " edited) | their CPU time, s | agree |")
    print("|---|---|---|---|---|---|")
    for prog, r in rows:
        v = r["verdict"]
        print("| %s | %s | %s%s: %s %.2f s -> %.2f s, output %s | %s; %s | %s; %s | %s |" % (
            prog, r["advice"].replace("|", "\\|"), v["verdict"], " (%s)" % v["reason"] if v.get("reason") else "",
            v.get("measure"), v["base_ns"] / 1e9, v["new_ns"] / 1e9, v.get("output"),
            ", ".join("%.1f" % t for t in r["plain_s"]), ", ".join("%.1f" % t for t in r["plain_edited_s"]),
            ", ".join("%.1f" % t for t in r["plain_cpu_s"]), ", ".join("%.1f" % t for t in r["plain_edited_cpu_s"]),
            "yes" if r["agrees"] else "NO: " + r["why"]))
    print()
    print("Experiments: %d of %d verdicts agree with plain timed runs of the same edit." % (
        sum(r["agrees"] for _, r in rows), len(rows)))


def severities(s):
    """Each finding's severity ('warning'), from the summary or its text's first word."""
    return s.get("severities") or [f["text"].split(" ", 1)[0] for f in s["findings"]]


def edits(results):
    """(tried, kept, follow_tried, follow_failed): agprof fix printed a diff; its patched program printed
    the same and lost what it promised; the advice in words was followed; following it failed."""
    tried = any(w.startswith("agprof fix") and "(exit 0)" in w for _, w in results)
    kept = tried and all(st in ("PASS", "XPASS") for st, w in results
                         if w.startswith("the patched") or w.startswith("the fix removes"))
    follow = [st for st, w in results if w.startswith("the program with the advice") or w.startswith("following the advice")]
    return tried, kept, bool(follow), any(st in ("FAIL", "XFAIL") for st in follow)


def project_name(project):
    """'TensorFlow Probability 0.25' as 'TensorFlow Probability', 'TensorFlow 2.21 (tf.data)' as 'TensorFlow'."""
    words = []
    for w in project.split():
        if w[0].isdigit():
            break
        words.append(w)
    return " ".join(words)


def precision_table(summaries, experiments):
    """The table of counts, with the totals and the precision at warning or above."""
    head = ("program", "project", "kind", "findings W+", "I", "TP", "TP*", "FP", "unjudged", "edit tried",
            "edit kept", "advice not followable", "experiment (fix --verify vs plain runs)")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    t = dict.fromkeys(("programs", "warn", "info", "TP", "TP*", "FP", "unjudged", "tried", "kept", "followed",
                       "unfollowable", "warn_tp", "projects"), 0)
    projects = set()
    for s in summaries:
        sev = severities(s)
        judged = [f["judgement"] for f in s["findings"]]
        c = {"TP": sum(j in ("true", "allowed") for j in judged), "TP*": judged.count("partial"),
             "FP": judged.count("false alarm"), "unjudged": judged.count("unjudged")}
        warn = sum(v != "info" for v in sev)
        tried, kept, followed, unfollowable = edits(s["results"])
        t["programs"] += 1
        t["warn"] += warn
        t["info"] += len(sev) - warn
        t["warn_tp"] += sum(v != "info" and j in ("true", "allowed") for v, j in zip(sev, judged))
        for k in c:
            t[k] += c[k]
        t["tried"] += tried
        t["kept"] += kept
        t["followed"] += followed
        t["unfollowable"] += unfollowable
        t["expected"] = t.get("expected", 0) + len(s["expected"])
        t["missed"] = t.get("missed", 0) + len(s["missed"])
        projects.add(project_name(s["project"]))
        e = experiments.get(s["program"])
        ran = e["experiments"] if e else []
        t["experiments"] = t.get("experiments", 0) + len(ran)
        t["agree"] = t.get("agree", 0) + sum(r["agrees"] for r in ran)
        print("| %s | %s | %s | %d | %d | %d | %d | %d | %d | %s | %s | %s | %s |" % (
            s["program"], s["project"], s["kind"], warn, len(sev) - warn, c["TP"], c["TP*"], c["FP"], c["unjudged"],
            "yes" if tried else "-", ("yes" if kept else "no") if tried else "-",
            ("yes" if unfollowable else "no") if followed else "-", experiment_cell(e)))
    print("| **total: %d programs, %d projects** | | | %d | %d | %d | %d | %d | %d | %d | %d | %d of %d | %d of %d agree |"
          % (t["programs"], len(projects), t["warn"], t["info"], t["TP"], t["TP*"], t["FP"], t["unjudged"], t["tried"],
             t["kept"], t["unfollowable"], t["followed"], t.get("agree", 0), t.get("experiments", 0)))
    print()
    print("Precision at warning or above: %d of %d findings fully right (%s); over all findings: TP %d, TP* %d, FP %d,"
          " unjudged %d; %d of %d expected findings missed." % (
              t["warn_tp"], t["warn"], "%.1f%%" % (100.0 * t["warn_tp"] / t["warn"]) if t["warn"] else "-",
              t["TP"], t["TP*"], t["FP"], t["unjudged"], t.get("missed", 0), t.get("expected", 0)))


def detail_table(summaries):
    kinds = ("true", "allowed", "partial", "false alarm", "unjudged")
    rows, totals = [], dict.fromkeys(kinds + ("missed", "expected"), 0)
    for s in summaries:
        prog = s["program"]
        count = {k: sum(1 for f in s["findings"] if f["judgement"] == k) for k in kinds}
        for k in kinds:
            totals[k] += count[k]
        totals["missed"] += len(s["missed"])
        totals["expected"] += len(s["expected"])
        rows.append("| %s | %s | %s | %s | %d | %d | %d | %s | %s |" % (
            prog, s["project"], cell(s["expected"]),
            cell(["%s (%s)" % (short(f["text"], prog), f["judgement"]) for f in s["findings"]]),
            count["true"] + count["allowed"], count["partial"], count["false alarm"],
            cell(s["missed"]), fix_cell(s["results"])))
    print("| program | project | expected (written before agprof ran) | agprof's findings today (judgement) |"
          " true | partial | false alarms | misses | agprof fix |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print()
    print("Totals: %d findings: %d true (%d of them allowed, not required), %d partial (the right issue at"
          " the wrong line or with the wrong advice), %d false alarms, %d unjudged; %d of %d expected findings"
          " missed." % (sum(totals[k] for k in kinds), totals["true"] + totals["allowed"], totals["allowed"],
                        totals["partial"], totals["false alarm"], totals["unjudged"], totals["missed"],
                        totals["expected"]))


def run_corpus(build):
    """meson test --suite corpus with every program (AGPROF_CORPUS_ALL=1); return the summaries' directory."""
    d = tempfile.mkdtemp(prefix="agprof-corpus-table-")
    env = dict(os.environ, AGPROF_CORPUS_ALL="1", AGPROF_CORPUS_SUMMARY=d)
    p = subprocess.run(["meson", "test", "-C", build, "--suite", "corpus"], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    tail = p.stdout.decode("utf-8", "replace").splitlines()
    print("\n".join(ln for ln in tail if " corpus-" in ln or ln.startswith(("Ok:", "Expected Fail:", "Fail:",
                                                                              "Skipped:", "Timeout:"))))
    print("(meson test exited %d; summaries in %s)\n" % (p.returncode, d), file=sys.stderr)
    return d


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__.split("\n\n")[1])
        sys.exit(0 if args else 2)
    d = run_corpus(args[1] if len(args) > 1 else "build") if args[0] == "--run" else args[0]
    summaries, experiments = load(d)
    precision_table(summaries, experiments)
    print()
    experiment_table(experiments)
    print()
    detail_table(summaries)


if __name__ == "__main__":
    main()
