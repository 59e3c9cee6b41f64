"""agprof check exit codes and thresholds, the JUnit, GitHub, SARIF, JSON,
CSV and Chrome outputs (well-formed, expected fields), user rules with an
error, and bad recordings (one clear line, exit 2, never a crash).
Runs on a real recording of samples/retrace_shape.py.
"""
import csv
import io
import json
import os
import shutil
import sqlite3
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agcheck  # noqa: E402
from agcheck import agprof, check  # noqa: E402

SAMPLE_FILE = os.path.realpath(os.path.join(agcheck.SAMPLES, "retrace_shape.py"))


def check_exit(args, want, what):
    rc, out, err = agprof(*args)
    check(rc == want, "%s: exit %d, expected %d (stderr: %s)" % (what, rc, want, err.strip()[:300]))
    return rc, out, err


def test_check(rec, shape_line):
    check_exit(["check", rec], 0, "check with no threshold (fail-on error; the finding is a warning)")
    rc, out, _ = check_exit(["check", rec, "--max-traces", "3"], 1, "--max-traces 3 on 4 traces")
    check("predict" in out and ("retrace_shape.py:%d" % shape_line) in out,
          "--max-traces violation names the function and its line: %r" % out)
    check_exit(["check", rec, "--max-traces", "4"], 0, "--max-traces 4 on 4 traces")
    check_exit(["check", rec, "--max-traces", "predict=4"], 0, "--max-traces predict=4")
    check_exit(["check", rec, "--max-traces=predict=3"], 1, "--max-traces=predict=3")
    check_exit(["check", rec, "--max-traces", "other=1"], 0, "--max-traces for a function never traced")
    check_exit(["check", rec, "--max-eager-share", "100"], 0, "--max-eager-share 100")
    check_exit(["check", rec, "--max-eager-share", "0"], 1, "--max-eager-share 0 with eager ops")
    check_exit(["check", rec, "--forbid", "retracing"], 1, "--forbid retracing")
    check_exit(["check", rec, "--forbid", "py-function"], 0, "--forbid py-function")
    check_exit(["check", rec, "--fail-on", "warning"], 1, "--fail-on warning")
    check_exit(["check", rec, "--fail-on", "error"], 0, "--fail-on error")
    check_exit(["check", rec, "--set", "retracing.error_traces=3"], 1, "--set makes the finding an error")
    # Usage errors: exit 2.
    check_exit(["check", rec, "--max-traces", "abc"], 2, "--max-traces abc")
    check_exit(["check", rec, "--forbid", "no-such-rule"], 2, "--forbid an unknown rule")
    check_exit(["check", rec, "--fail-on", "info"], 2, "--fail-on info")
    check_exit(["check", rec, "--format", "xml"], 2, "--format xml")
    check_exit(["check", rec, "--bogus"], 2, "unknown option")
    check_exit(["check"], 2, "no recording")
    check_exit(["check", rec, "--set", "retracing.nope=1"], 2, "--set an unknown threshold")

    # JUnit: one testcase per threshold, failures where crossed.
    rc, out, _ = check_exit(["check", rec, "--max-traces", "3", "--max-eager-share", "100", "--forbid",
                             "retracing", "--format", "junit"], 1, "junit")
    try:
        root = ET.fromstring(out)
    except ET.ParseError as e:
        check(False, "JUnit output is well-formed XML (%s): %r" % (e, out[:300]))
        return
    suites = root.findall("testsuite") if root.tag == "testsuites" else [root]
    check(len(suites) == 1, "one testsuite")
    cases = suites[0].findall("testcase")
    check(len(cases) == 3, "one testcase per threshold (%d)" % len(cases))
    check(suites[0].get("tests") == "3" and suites[0].get("failures") == "2",
          "testsuite tests=3 failures=2 (%s)" % suites[0].attrib)
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    check(sorted(failed) == ["forbid retracing", "max-traces 3"], "failed testcases %s" % failed)
    for c in cases:
        fl = c.find("failure")
        if fl is not None:
            check(fl.get("message") and "retrace_shape.py:%d" % shape_line in (fl.text or ""),
                  "failure of %s names the line: %r" % (c.get("name"), fl.text))

    # GitHub workflow commands.
    rc, out, _ = check_exit(["check", rec, "--max-traces", "3", "--format", "github"], 1, "github")
    ann = [l for l in out.splitlines() if l.startswith("::error ")]
    check(len(ann) == 1, "one ::error annotation: %r" % out)
    if ann:
        head, _, msg = ann[0][len("::error "):].partition("::")
        props = dict(p.split("=", 1) for p in head.split(","))
        check(props.get("file", "").endswith("samples/retrace_shape.py"), "annotation file= %r" % props)
        check(props.get("line") == str(shape_line), "annotation line= %r" % props)
        check("predict" in msg, "annotation message names the function: %r" % msg)


def test_report_formats(rec, shape_line):
    rc, out, err = check_exit(["report", "--format", "sarif", rec], 0, "report sarif")
    try:
        sarif = json.loads(out)
    except ValueError:
        check(False, "SARIF is JSON: %r" % out[:200])
        return
    check(sarif.get("version") == "2.1.0", "SARIF version 2.1.0")
    run = sarif["runs"][0]
    check(run["tool"]["driver"]["name"] == "agprof", "SARIF tool name")
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    check("retracing" in rule_ids, "SARIF lists the rules: %s" % rule_ids)
    res = [r for r in run["results"] if r["ruleId"] == "retracing"]
    if check(res, "a SARIF result for retracing"):
        r = res[0]
        check(r["level"] in ("warning", "error", "note"), "SARIF level")
        check(r["message"]["text"], "SARIF message")
        pl = r["locations"][0]["physicalLocation"]
        uri = pl["artifactLocation"]["uri"]
        check(uri.endswith("samples/retrace_shape.py"), "SARIF uri %r" % uri)
        check(pl["region"]["startLine"] == shape_line, "SARIF startLine %r" % pl["region"])
        if "uriBaseId" in pl["artifactLocation"]:
            base = run["originalUriBaseIds"][pl["artifactLocation"]["uriBaseId"]]["uri"]
            check(base.startswith("file://") and base.endswith("/"), "SARIF base uri %r" % base)

    rep = agcheck.report_json(rec)
    for key in ("version", "session", "findings", "functions", "eager_sites", "eager_ops", "blackboxes"):
        check(key in rep, "JSON has %s" % key)
    for f in rep["functions"]:
        for key in ("name", "traces", "calls", "location", "retraces"):
            check(key in f, "JSON function has %s" % key)
        for r in f["retraces"]:
            for key in ("cause", "argument", "before", "after", "location"):
                check(key in r, "JSON retrace has %s" % key)
    for f in rep["findings"]:
        for key in ("rule", "severity", "function", "cause", "location", "message", "recommendation"):
            check(key in f, "JSON finding has %s" % key)

    rc, out, _ = check_exit(["report", "--format", "csv", rec], 0, "report csv")
    rows = list(csv.reader(io.StringIO(out)))
    check(rows and rows[0][:4] == ["rule", "severity", "function", "cause"], "CSV header %r" % rows[:1])
    check(any(r[0] == "retracing" and r[2] == "predict" for r in rows[1:]), "CSV has the retracing row")
    # the saving columns carry the JSON's numbers (the same model)
    check(rows[0][-2:] == ["saving_ns", "saving_method"], "CSV saving columns %r" % rows[:1])
    js = json.loads(check_exit(["report", "--format", "json", rec], 0, "report json for csv")[1])
    csv_saving = [(r[0], int(r[-2]), r[-1]) for r in rows[1:] if len(r) == len(rows[0])]
    js_saving = [(f["rule"], f["saving_ns"], f["saving_method"]) for f in js["findings"]]
    check(csv_saving == js_saving and any(s[1] > 0 for s in csv_saving),
          "CSV savings %r equal the JSON's %r" % (csv_saving, js_saving))
    rc, out, _ = check_exit(["report", "--format", "csv", "--functions", rec], 0, "report csv --functions")
    rows = list(csv.reader(io.StringIO(out)))
    check(rows and rows[0][0] == "function" and any(r[0] == "predict" for r in rows[1:]), "CSV functions table")

    env_no_color = dict(os.environ, NO_COLOR="1")
    import subprocess
    p = subprocess.run([agcheck.AGPROF, "report", rec], stdout=subprocess.PIPE, env=env_no_color)
    text = p.stdout.decode()
    check(p.returncode == 0 and "\x1b[" not in text, "no colour when piped / NO_COLOR")
    check("retracing" in text and "predict" in text and ("retrace_shape.py:%d" % shape_line) in text,
          "the text report names the finding, function and line")
    rc, out, _ = check_exit(["report", "--color", "--summary", rec], 0, "report --color")
    check("\x1b[" in out, "--color forces colours")
    for sec in ("--retracing", "--eager", "--ops", "--blackbox", "--functions"):
        rc, out, _ = check_exit(["report", sec, rec], 0, "report " + sec)
        check(out.strip(), "report %s prints something" % sec)
    check_exit(["report", "--format", "yaml", rec], 2, "report --format yaml")
    check_exit(["report"], 2, "report without recording")

    # Chrome trace-event JSON.
    d = agcheck.tmpdir("agprof-an-")
    out_path = os.path.join(d, "trace.json")
    check_exit(["export", "--format", "chrome", "-o", out_path, rec], 0, "export chrome")
    try:
        with open(out_path) as fh:
            tr = json.load(fh)
        ev = tr["traceEvents"]
        xs = [e for e in ev if e.get("ph") == "X"]
        check(xs, "Chrome trace has complete events")
        check(all(isinstance(e["ts"], (int, float)) and e["dur"] >= 0 and "pid" in e and "tid" in e for e in xs),
              "every X event has ts, dur, pid, tid")
        cats = {e["cat"] for e in xs}
        check({"tracing", "graph", "eager"} <= cats, "categories tracing, graph, eager: %s" % cats)
        check(sum(1 for e in xs if e["cat"] == "tracing") == 4, "four trace events")
        check(any(e.get("ph") == "M" and e["name"] == "thread_name" for e in ev), "thread names")
    except (OSError, ValueError, KeyError) as e:
        check(False, "Chrome trace readable: %s" % e)
    check_exit(["export", "--format", "pprof", rec], 2, "export --format pprof")


def test_gpu_section(rec):
    """--gpu prints the GPU part; kernels added to a copy of the recording show in text and JSON."""
    rc, out, _ = check_exit(["report", "--gpu", rec], 0, "report --gpu without GPU data")
    check("GPU" in out and "no GPU activity" in out, "--gpu says there is no GPU data: %r" % out)
    d = agcheck.tmpdir("agprof-gpu-")
    p = os.path.join(d, "gpu.agprof")
    shutil.copy(rec, p)
    db = sqlite3.connect(p)
    pid = db.execute("SELECT pid FROM processes LIMIT 1").fetchone()[0]
    t0 = db.execute("SELECT min(start_ns) FROM function_calls").fetchone()[0]
    db.execute("INSERT INTO strings(text) VALUES ('volta_sgemm_128x64_nn')")
    kid = db.execute("SELECT id FROM strings WHERE text = 'volta_sgemm_128x64_nn'").fetchone()[0]
    for i in range(50):
        db.execute("INSERT INTO gpu_activity(pid, kind, name_id, device, context, stream, start_ns, end_ns)"
                   " VALUES (?, 'kernel', ?, 0, 1, 7, ?, ?)", (pid, kid, t0 + i * 100000, t0 + i * 100000 + 20000))
    db.execute("INSERT OR REPLACE INTO meta VALUES ('gpu_status', 'on')")
    db.commit()
    db.close()
    rc, out, _ = check_exit(["report", "--gpu", p], 0, "report --gpu with kernels")
    check("volta_sgemm_128x64_nn" in out and "50 kernels" in out, "--gpu lists the kernels: %r" % out[:500])
    rep = agcheck.report_json(p)
    g = rep.get("gpu") or {}
    check(g.get("has_data") is True and g.get("kernels") == 50, "JSON gpu object: %s" % str(g)[:200])


def test_user_rules(rec):
    d = agcheck.tmpdir("agprof-rules-")
    with open(os.path.join(d, "a-good.rule"), "w") as fh:
        fh.write("""# a user rule reading the recording with SQL
id: many-calls
severity: info
threshold: min_calls = 2
select: sql
query: |
    SELECT s.text AS function, count(*) AS calls FROM function_calls c
    JOIN graph_functions g ON g.id = c.graph_function_id
    JOIN functions f ON f.id = g.function_id JOIN strings s ON s.id = f.name_id
    GROUP BY f.id
when: calls >= min_calls
message: {function} ran {calls} graph calls
recommendation: nothing to do
""")
    with open(os.path.join(d, "b-bad.rule"), "w") as fh:
        fh.write("id: broken\nseverity: warning\nselect: functions\nwhen: traces >\nmessage: x\n")
    with open(os.path.join(d, "c-field.rule"), "w") as fh:
        fh.write("id: unknown-field\nselect: functions\nwhen: no_such_field > 1\nmessage: x\n")
    rc, out, err = agprof("report", "--format", "json", "--rules", d, rec)
    check(rc == 0, "a bad user rule does not fail the report (exit %d)" % rc)
    check(os.path.join(d, "b-bad.rule") + ":4:" in err, "the parse error names file and line: %r" % err)
    check(os.path.join(d, "c-field.rule") + ":3:" in err and "no_such_field" in err,
          "the unknown field error names file, line and field: %r" % err)
    try:
        rep = json.loads(out)
        mine = [f for f in rep["findings"] if f["rule"] == "many-calls"]
        check(mine and mine[0]["function"] == "predict" and "predict ran" in mine[0]["message"],
              "the good user rule still runs: %s" % mine)
        check(any(f["rule"] == "retracing" for f in rep["findings"]), "built-in rules still run")
    except ValueError:
        check(False, "report JSON with user rules")


def test_bad_recordings(rec, schema_sql):
    d = agcheck.tmpdir("agprof-bad-")
    cases = {}
    cases["missing"] = os.path.join(d, "missing.agprof")
    p = os.path.join(d, "text.agprof")
    with open(p, "w") as fh:
        fh.write("hello, not a recording\n" * 20)
    cases["text"] = p
    p = os.path.join(d, "empty-file.agprof")
    open(p, "w").close()
    cases["empty file"] = p
    p = os.path.join(d, "truncated.agprof")
    with open(rec, "rb") as src, open(p, "wb") as dst:
        data = src.read()
        dst.write(data[: len(data) // 2])
    cases["truncated"] = p
    p = os.path.join(d, "garbled.agprof")
    with open(p, "wb") as dst:
        dst.write(data[:4096] + bytes((i * 7) & 0xFF for i in range(len(data) - 4096)))
    cases["corrupt"] = p
    p = os.path.join(d, "newer.agprof")
    shutil.copy(rec, p)
    db = sqlite3.connect(p)
    db.execute("PRAGMA user_version = 99")
    db.commit()
    db.close()
    cases["newer schema"] = p
    p = os.path.join(d, "other.sqlite")
    db = sqlite3.connect(p)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    cases["other SQLite"] = p
    p = os.path.join(d, "no-tf.agprof")
    db = sqlite3.connect(p)
    db.executescript(schema_sql)
    db.executemany("INSERT INTO meta VALUES (?, ?)", [("schema_version", "1"), ("exit_status", "1"),
                                                      ("start_ns", "1000"), ("end_ns", "2000"),
                                                      ("tf_status", "not-loaded")])
    db.execute("INSERT INTO processes(pid, argv, start_ns, end_ns, exit_status) VALUES (1, '[\"python\"]', 1000, 2000, 1)")
    db.commit()
    db.close()
    empty = p
    for what, path in cases.items():
        for cmd in (["report"], ["check"], ["export", "--format", "chrome"]):
            rc, out, err = agprof(*(cmd + [path]))
            lines = [l for l in err.splitlines() if l.strip()]
            check(rc == 2, "%s %s: exit %d, expected 2 (%r)" % (cmd[0], what, rc, err[:200]))
            if True:
                check(len(lines) == 1 and lines[0].startswith("error: "),
                      "%s %s: one 'error:' line, got %r" % (cmd[0], what, err[:300]))
    # A readable recording without TensorFlow activity is a report (exit 0,
    # saying why), passes check (nothing crossed, a warning line); export
    # has nothing to export (exit 2).
    rc, out, err = agprof("report", empty)
    check(rc == 0 and "no TensorFlow activity was recorded" in out and "status 1 before TensorFlow" in out,
          "report on an empty recording: exit %d, says why: %r %r" % (rc, out[-400:], err[:200]))
    rc, out, err = agprof("report", "--format", "json", empty)
    doc = json.loads(out) if rc == 0 else {}
    check(rc == 0 and "TensorFlow" in (doc.get("session", {}).get("empty_reason") or "")
          and doc.get("sessions") == [] and doc.get("findings") == [],
          "report --format json on an empty recording: exit %d, empty_reason %r" %
          (rc, doc.get("session", {}).get("empty_reason")))
    rc, out, err = agprof("check", "--max-traces", "0", empty)
    check(rc == 0 and "0 of 1 threshold crossed" in out and err.startswith("warning: ") and "TensorFlow" in err,
          "check on an empty recording: exit %d, %r %r" % (rc, out, err))
    rc, out, err = agprof("export", "--format", "chrome", empty)
    check(rc == 2 and "TensorFlow" in err, "export on an empty recording: exit %d, %r" % (rc, err))
    # eager ops and no tf.function (issue 34): --max-traces loads no eager counts, yet the
    # recording holds TensorFlow activity, and check must not say it holds none
    eager = os.path.join(os.path.dirname(empty), "eager-only.agprof")
    shutil.copy(empty, eager)
    db = sqlite3.connect(eager)
    db.execute("INSERT INTO strings(id, text) VALUES (1, 'AddV2')")
    db.executemany("INSERT INTO eager_ops(pid, tid, start_ns, end_ns, op_id, ok) VALUES (1, 1, ?, ?, 1, 1)",
                   [(1100 + i, 1101 + i) for i in range(10)])
    db.commit()
    db.close()
    rc, out, err = agprof("check", "--max-traces", "5", eager)
    check(rc == 0 and "0 of 1 threshold crossed" in out and "no tf.function was traced" in out
          and "no TensorFlow activity" not in err,
          "check --max-traces on eager ops only: exit %d, no 'no TensorFlow activity' warning: %r %r" % (rc, out, err))


def main():
    rec = agcheck.record("retrace_shape")
    shape_line = agcheck.markers("retrace_shape")["shape"][0]
    with open(os.path.join(agcheck.SOURCE_ROOT, "common", "schema.sql")) as fh:
        schema_sql = fh.read()
    test_check(rec, shape_line)
    test_report_formats(rec, shape_line)
    test_gpu_section(rec)
    test_user_rules(rec)
    test_bad_recordings(rec, schema_sql)
    agcheck.finish("outputs")


if __name__ == "__main__":
    main()
