"""The user's own line (blame frame): a library in a site-packages directory
of the test tree (samples/fakelib/site-packages/minilib) builds a new
tf.function on every minimize() call; samples/library_retrace.py calls it
at the line marked `# agprof: library-retrace`.

Recorded with real TensorFlow under `agprof run`, and checked:
- trace counts equal the sum of experimental_get_tracing_count() over the
  tf.function objects (the sample's oracle), one trace per object;
- every trace's call site is a chain: the library frame (library = 1) at
  minilib's marked call line, whose parent is the user's marked line;
- `agprof report --format json`: a `retracing` finding with cause
  new-function-object whose `location` is the user's line and
  `library_location` minilib/optimizer.py's line; the same for each retrace;
  the eager-by-line row of the user's line names minilib's eager line;
- the finding fires on cost alone (count thresholds raised out of reach),
  and not when the cost thresholds are raised too;
- the text report shows `library_retrace.py:N → minilib/optimizer.py:M`, and
  its tables fit 80 columns;
- `agprof run --user-code <minilib>` makes minilib user code: the location is
  then minilib's line and library_location is null (the other overrides are
  unit-tested in tests/unit/test-ring.c, frames_are_classified);
- minilib installed as `pip install --target DIR` lays it out (its package
  beside a minilib-1.0.dist-info directory) and found through PYTHONPATH is
  library code too, with the same user line and minilib's line beside it;
  without the .dist-info directory too (issue 45: a source checkout on
  PYTHONPATH outside the program's tree is a library; see
  test_library_ownership.py).
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq  # noqa: E402

SAMPLE = "library_retrace.py"
MINILIB = os.path.join(agtest.SAMPLES, "fakelib", "site-packages", "minilib")
OPTIMIZER = os.path.join(MINILIB, "optimizer.py")
ARROW = "\u2192"


def marked(path, tag):
    with open(path) as fh:
        return [no for no, text in enumerate(fh, 1) if ("# " + tag) in text]


def record(d, name, options=(), oracle=False):
    out = os.path.join(d, name + ".agprof")
    env = dict(os.environ)
    if oracle:
        env["AGPROF_ORACLE"] = os.path.join(d, name + ".json")
    cmd = [agtest.AGPROF, "run", "-q", "-o", out] + list(options) + \
        ["--", agtest.PYTHON, agtest.sample(SAMPLE)]
    p = subprocess.run(cmd, env=env, cwd=agtest.SOURCE_ROOT, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=240)
    check(p.returncode == 0, "agprof run %s" % " ".join(options), p.returncode, 0)
    if p.returncode:
        sys.stdout.write(p.stderr.decode("utf-8", "replace")[-3000:])
    return out


def report(rec, *args):
    r = subprocess.run([agtest.AGPROF, "report"] + list(args) + [rec], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120, cwd=agtest.SOURCE_ROOT,
                       env=dict(os.environ, NO_COLOR="1"))
    check(r.returncode == 0, "agprof report %s" % " ".join(args), r.returncode, 0)
    return r.stdout.decode("utf-8")


def loc(d):
    return (os.path.realpath(d["file"]), d["line"]) if d else None


def new_object_findings(doc):
    return [f for f in doc.get("findings", [])
            if f["rule"] == "retracing" and f.get("cause") == "new-function-object"]


def check_oracle_and_chain(rec, oracle_path, user_line, call_line):
    with open(oracle_path) as fh:
        oracle = json.load(fh)
    db = agtest.open_recording(rec)
    truth = oracle["functions"]["step"]
    rows = db.execute(
        "SELECT t.function_object, count(*) n FROM traces t JOIN functions f ON f.id = t.function_id"
        " JOIN strings s ON s.id = f.name_id WHERE s.text = 'step' AND t.pid = ?"
        " GROUP BY t.function_object ORDER BY min(t.start_ns)", (oracle["pid"],)).fetchall()
    check_eq(sum(r["n"] for r in rows), truth["tracing_count"], "traces of step (oracle)")
    check_eq([r["n"] for r in rows], truth["objects"], "traces per tf.function object (oracle)")
    chains = db.execute(
        "SELECT lf.text lib_file, l.line lib_line, l.library lib, uf.text user_file, u.line user_line,"
        " u.library user_lib, u.parent_id user_parent FROM traces t"
        " JOIN callsites l ON l.id = t.callsite_id JOIN strings lf ON lf.id = l.file_id"
        " LEFT JOIN callsites u ON u.id = l.parent_id LEFT JOIN strings uf ON uf.id = u.file_id").fetchall()
    check_eq(len(chains), truth["tracing_count"], "traces with a call-site chain")
    for c in chains:
        check(agtest.same_file(c["lib_file"], OPTIMIZER) and c["lib_line"] == call_line and c["lib"] == 1,
              "trace site is minilib's call line, a library frame", (c["lib_file"], c["lib_line"], c["lib"]),
              (OPTIMIZER, call_line, 1))
        check(agtest.same_file(c["user_file"], agtest.sample(SAMPLE)) and c["user_line"] == user_line
              and c["user_lib"] == 0 and c["user_parent"] is None,
              "its parent is the user's marked line", (c["user_file"], c["user_line"], c["user_lib"]),
              (SAMPLE, user_line, 0))
    db.close()


def check_json(doc, user, lib):
    found = new_object_findings(doc)
    check(len(found) == 1, "one retracing/new-function-object finding",
          [(f["rule"], f.get("cause")) for f in doc.get("findings", [])])
    for f in found:
        check_eq(loc(f.get("location")), user, "finding location")
        check_eq(loc(f.get("library_location")), lib, "finding library_location")
    fn = [f for f in doc.get("functions", []) if f["name"] == "step"]
    retraces = fn[0]["retraces"] if fn else []
    check(len(retraces) == 4, "4 retraces of step", len(retraces), 4)
    for r in retraces:
        check_eq(loc(r.get("location")), user, "retrace location")
        check_eq(loc(r.get("library_location")), lib, "retrace library_location")


def check_pythonpath_install(d):
    """minilib on PYTHONPATH, laid out as `pip install --target` leaves it."""
    prog, deps = os.path.join(d, "prog"), os.path.join(d, "deps")
    os.makedirs(prog)
    for name in (SAMPLE, "oracle.py"):
        shutil.copy(agtest.sample(name), prog)
    shutil.copytree(MINILIB, os.path.join(deps, "minilib"))
    user = (os.path.realpath(os.path.join(prog, SAMPLE)), agtest.marker_lines(SAMPLE)["library-retrace"][0])
    lib = (os.path.realpath(os.path.join(deps, "minilib", "optimizer.py")), marked(OPTIMIZER, "minilib: call")[0])
    for installed in (False, True):
        if installed:
            os.makedirs(os.path.join(deps, "minilib-1.0.dist-info"))
        out = os.path.join(d, "target-%d.agprof" % installed)
        env = dict(os.environ, PYTHONPATH=deps)
        p = subprocess.run([agtest.AGPROF, "run", "-q", "-o", out, "--", agtest.PYTHON, SAMPLE], env=env, cwd=prog,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=240)
        check_eq(p.returncode, 0, "agprof run with minilib on PYTHONPATH (installed: %s)" % installed)
        found = new_object_findings(json.loads(report(out, "--format", "json")))
        check(len(found) == 1, "PYTHONPATH (installed: %s): one new-function-object finding" % installed)
        for f in found:
            got = (loc(f.get("location")), loc(f.get("library_location")) if f.get("library_location") else None)
            check_eq(got, (user, lib), "PYTHONPATH, %s: location and library_location" %
                     ("a .dist-info beside minilib" if installed else "no .dist-info, outside the program's tree"))


def main():
    agtest.need_agprof()
    d = agtest.tmpdir()
    user_line = agtest.marker_lines(SAMPLE)["library-retrace"][0]
    call_line = marked(OPTIMIZER, "minilib: call")[0]
    eager_line = marked(OPTIMIZER, "minilib: eager")[0]
    user = (os.path.realpath(agtest.sample(SAMPLE)), user_line)
    lib = (os.path.realpath(OPTIMIZER), call_line)

    rec = record(d, "default", oracle=True)
    check_oracle_and_chain(rec, os.path.join(d, "default.json"), user_line, call_line)
    doc = json.loads(report(rec, "--format", "json"))
    check_json(doc, user, lib)
    rows = [s for s in doc.get("eager_sites", []) if loc(s.get("location")) == user]
    check(len(rows) == 1 and loc(rows[0].get("library_location")) == (lib[0], eager_line),
          "eager row of the user's line names minilib's eager line",
          [(s.get("location"), s.get("library_location")) for s in doc.get("eager_sites", [])])

    # On cost alone: the count clauses out of reach, the cost thresholds low.
    cost = ["--set", "retracing.max_traces=100", "--set", "retracing.min_retraces=100",
            "--set", "retracing.object_ns=50ms"]
    check(len(new_object_findings(json.loads(report(rec, "--format", "json", *cost)))) == 1,
          "the finding fires on cost alone")
    none = cost + ["--set", "retracing.object_ns=1000s", "--set", "retracing.object_share=99%"]
    check(not new_object_findings(json.loads(report(rec, "--format", "json", *none))),
          "and not when the cost is under the thresholds too")

    text = report(rec)
    want = "library_retrace.py:%d %s minilib/optimizer.py:%d" % (user_line, ARROW, call_line)
    check(want in text, "text report shows %r" % want)
    for section in ("Eager dispatch by source line", "Eager dispatch by op type", "Traced functions"):
        body = text.split(section, 1)[1].split("\n\n", 1)[0] if section in text else ""
        wide = [ln for ln in body.splitlines() if len(ln) > 80]
        check(body and not wide, "%s table fits 80 columns" % section, wide, [])

    # --user-code: minilib is the user's code now.
    rec = record(d, "usercode", ["--user-code", MINILIB])
    doc = json.loads(report(rec, "--format", "json"))
    found = new_object_findings(doc)
    check(len(found) == 1, "--user-code: one new-function-object finding")
    for f in found:
        check_eq(loc(f.get("location")), lib, "--user-code: location is minilib's line")
        check_eq(f.get("library_location"), None, "--user-code: no library_location")
    db = agtest.open_recording(rec)
    check_eq(db.execute("SELECT count(*) FROM callsites WHERE library = 1").fetchone()[0], 0,
             "--user-code: no library frame recorded")
    db.close()

    check_pythonpath_install(d)
    agtest.finish("library_blame")


if __name__ == "__main__":
    main()
