"""The corpus's table for README.md, from the summaries test_corpus.py wrote.

Usage: AGPROF_CORPUS_SUMMARY=DIR meson test -C build --suite corpus
       python3 tests/corpus/table.py DIR        (prints the Markdown table)

One row per program: what an expert expects, what agprof finds today and
the judgement of each finding (true: as expected; partial: the right issue
at the wrong line, level or advice; allowed: true, not required; false
alarm; unjudged: info no sidecar entry speaks of), the misses, and what
`agprof fix` did.  The totals close the table.
"""
import json
import os
import sys


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
            out.append(("diff" if "prints a diff" in what else "no diff") + ("" if status in ("PASS", "XPASS") else " (wrong)"))
        elif what.startswith("the patched"):
            out.append("output kept" if status in ("PASS", "XPASS") else "output CHANGED")
        elif what.startswith("the fix removes"):
            out.append("finding gone" if status == "PASS" else "finding stays")
    return ", ".join(out) or "-"


def main():
    d = sys.argv[1]
    kinds = ("true", "allowed", "partial", "false alarm", "unjudged")
    rows, totals = [], dict.fromkeys(kinds + ("missed", "expected"), 0)
    for name in sorted(os.listdir(d)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(d, name)) as fh:
            s = json.load(fh)
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


if __name__ == "__main__":
    main()
