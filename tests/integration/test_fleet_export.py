"""A fleet without a merge: `agprof export --format csv --fleet DIR` of
every recording on its own, read by real DuckDB and real Spark as one table
set (docs/fleet.md).

Three programs (fleet_programs/: shapes.py, dtypes.py, values.py) run
several times each with different arguments, so that each function traces
a different number of times on different runs; the oracle of every run is
TensorFlow's own experimental_get_tracing_count().  Each program's first
run is a process of its own under `agprof run`; its other runs are blocks
of one process (fleet_programs/record_many.py), each `with
agprof.record()` around the program with fresh tf.function objects, so
TensorFlow is imported 6 times, not 51 (most of a short run's time).
Every recording is one of its own: its own recording_id; a block's
recording holds its block's traces (TensorFlow's count of the block's
objects), and no trace, graph call or eager op from outside the block;
meta.attached tells the two kinds apart.  Half of the recordings are
exported one by one as they arrive, the other half in one command.  Then:

- the folder is Hive-partitioned, a second export of the same recordings
  writes nothing and leaves every file as it was, and a new recording
  never rewrites an old one's partition;
- DuckDB and Spark (local[2]) run analyzer/export/fleet_sql/*.sql
  unchanged over the views of DIR/_load: summary.sql gives each
  recording TensorFlow's trace count and agprof's own figures (`agprof
  report --format json`: traces, trace_ns, function_calls, eager_ops,
  eager_ns); retrace_spread.sql each function's most and fewest traces
  across the runs (the oracles'); retraces_by_day.sql the sums;
  expensive_lines.sql each line's traces and eager ops as agprof's report
  places them; Spark's rows equal DuckDB's;
- bad input: a truncated recording is exported as far as it reads and
  flagged; the same id from other content, or twice on one command line,
  is refused in one line with exit 2 and nothing written; an old schema-1
  recording (tests/fuzz/base.agprof) is named by its content, the same id
  twice, with the current columns; hostile values (text in a time column,
  bytes that are not UTF-8, quotes, commas, newlines, a NUL) read back in
  both engines.

FLEET_RUNS (default 17: 51 recordings; 4 under the sanitizers: 12) runs of
each program: 3 x FLEET_RUNS recordings; about a minute on two cores (was
12 with a TensorFlow process per recording), half of it Spark; its log
says where the time goes.  Without the duckdb module the engines' part is
skipped (exit 77); without pyspark (or java) only Spark's part is skipped,
with a message.
"""
import concurrent.futures
import ctypes
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SQL_DIR = os.path.join(agtest.SOURCE_ROOT, "analyzer", "export", "fleet_sql")
QUERIES = ["summary", "retrace_spread", "retraces_by_day", "expensive_lines"]
PROGRAMS = {"shapes.py": "predict", "dtypes.py": "normalize", "values.py": "scale"}
# 51 recordings, as issue 48 asks (in 6 TensorFlow processes: about a minute on two cores);
# under the sanitizers 12, which test the same code in the same 6 processes
RUNS = int(os.environ.get("FLEET_RUNS", "17" if os.environ.get("AGPROF_SANITIZE", "none") == "none" else "4"))
T0 = time.monotonic()


def phase(what):
    """Where the test's time goes, in its log (the suite's most expensive test)."""
    print("%6.1f s  %s" % (time.monotonic() - T0, what), flush=True)


def runs():
    """[(program, N, i)] in the order the recordings are exported: run i of each program."""
    jobs = []
    for i in range(RUNS):
        for prog in PROGRAMS:
            jobs.append((prog, 1 + (i % 3) if prog != "dtypes.py" else 1 + (i % 4), i))
    return jobs


def out_of(d, prog, i):
    return os.path.join(d, "%s-%d.agprof" % (prog[:-3], i))


def read_oracle(out):
    """({function: TensorFlow's trace count}, the block's window or None) of a recording's oracle."""
    with open(out + ".oracle.json") as fh:
        oracle = json.load(fh)
    return {name: f["tracing_count"] for name, f in oracle["functions"].items()}, oracle.get("window_ns")


def record_launched(d, prog, n, i):
    """Run i of a program as a process of its own under `agprof run`."""
    out = out_of(d, prog, i)
    proc = agtest.run_agprof(out, [agtest.PYTHON, os.path.join(HERE, "fleet_programs", prog), str(n)],
                             env_extra={"AGPROF_ORACLE": out + ".oracle.json"})
    ok = proc.returncode == 0 and os.path.exists(out + ".oracle.json") and os.path.exists(out)
    check(ok, "agprof run %s %d" % (prog, n), proc.stderr.decode("utf-8", "replace")[-2000:])


def record_inside(d, prog, jobs):
    """Runs of a program as blocks of one process (fleet_programs/record_many.py: agprof.record())."""
    env = dict(os.environ, AGPROF_BIN=agtest.AGPROF,
               PYTHONPATH=os.pathsep.join(filter(None, [os.path.join(agtest.SOURCE_ROOT, "python"),
                                                        os.environ.get("PYTHONPATH")])))
    argv = [agtest.PYTHON, os.path.join(HERE, "fleet_programs", "record_many.py"), os.path.join(HERE, "fleet_programs", prog)]
    argv += ["%s=%d" % (out_of(d, prog, i), n) for _, n, i in jobs]
    proc = subprocess.run(argv, env=env, cwd=agtest.SOURCE_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=600)
    check_eq(proc.returncode, 0, "%d runs of %s in one process with agprof.record() (%s)"
             % (len(jobs), prog, proc.stderr.decode("utf-8", "replace")[-2000:]))


def record(d):
    """[(path, {function: TensorFlow's trace count})] per recording and {path: its block's window}
    (recordings made by agprof.record()), two processes at a time.

    Each program's first run is a process of its own under `agprof run`; its
    other runs are blocks of one process under agprof.record(): TensorFlow's
    import (most of a short run) once per program, not once per recording."""
    jobs = runs()
    launched = [j for j in jobs if j[2] == 0]
    inside = {prog: [j for j in jobs if j[0] == prog and j[2] > 0] for prog in PROGRAMS}
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        work = [pool.submit(record_inside, d, prog, js) for prog, js in inside.items() if js]
        work += [pool.submit(record_launched, d, *j) for j in launched]
        for w in work:
            w.result()
    processes = len(launched) + sum(1 for js in inside.values() if js)
    print("%d recordings from %d TensorFlow processes (%d under agprof run, %d with agprof.record())"
          % (len(jobs), processes, len(launched), len(jobs) - len(launched)))
    recs, windows = [], {}
    for prog, _, i in jobs:
        out = out_of(d, prog, i)
        if not check(os.path.exists(out + ".oracle.json"), "the recording and oracle of %s" % out):
            agtest.finish("fleet_export")
        oracle, window = read_oracle(out)
        recs.append((out, oracle))
        if window is not None:
            windows[out] = window
    return recs, windows


def check_own(recs, windows):
    """Every recording is one of its own: its own id, and a block's recording holds that block's
    traces, graph calls and eager ops only (none of an earlier block's, none after it)."""
    ids = [recording_id(p) for p, _ in recs]
    check_eq(len(set(ids)), len(recs), "every recording has its own recording_id")
    for path, oracle in recs:
        window = windows.get(path)
        db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        attached = db.execute("SELECT count(*) FROM meta WHERE key = 'attached'").fetchone()[0]
        check_eq(bool(attached), window is not None, "%s: meta.attached says how it was recorded" % path)
        if window is not None:
            check_eq(db.execute("SELECT count(*) FROM traces").fetchone()[0], sum(oracle.values()),
                     "%s: its traces = its block's TensorFlow count" % path)
            span = [int(v) for v, in db.execute("SELECT value FROM meta WHERE key IN ('start_ns', 'end_ns')"
                                               " ORDER BY key DESC")]
            check(len(span) == 2 and window[0] <= span[0] <= span[1] <= window[1],
                  "%s: the recording's start and end lie in its block" % path, span, window)
            for table in ("traces", "function_calls", "eager_ops", "eager_op_buckets"):
                outside = db.execute("SELECT count(*) FROM %s WHERE start_ns < ? OR start_ns > ?" % table,
                                     window).fetchone()[0]
                check_eq(outside, 0, "%s: %s from outside its block" % (path, table))
        db.close()
    if RUNS > 1:  # one run of each program: agprof run's only
        check(0 < len(windows) < len(recs), "recordings of both kinds in the fleet", (len(windows), len(recs)))


def export(fleet, *paths):
    return agtest.agprof_cmd("export", "--format", "csv", "--fleet", fleet, *paths)


def snapshot(fleet):
    """{relative path: (sha256, mtime_ns, inode)} of every file of the folder."""
    out = {}
    for root, _, files in os.walk(fleet):
        for f in files:
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                digest = hashlib.sha256(fh.read()).hexdigest()
            st = os.stat(p)
            out[os.path.relpath(p, fleet)] = (digest, st.st_mtime_ns, st.st_ino)
    return out


def recording_id(path):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    row = db.execute("SELECT value FROM meta WHERE key = 'recording_id'").fetchone()
    db.close()
    return row[0] if row else None


def check_layout(fleet, recs):
    half = len(recs) // 2
    for path, _ in recs[:half]:  # as each run finishes
        rc, out, err = export(fleet, path)
        check_eq(rc, 0, "export --fleet %s (%s)" % (os.path.basename(path), err.strip()))
    first = snapshot(fleet)
    rc, out, err = export(fleet, *[p for p, _ in recs[half:]])
    check_eq(rc, 0, "export --fleet of %d recordings in one command (%s)" % (len(recs) - half, err.strip()))
    after = snapshot(fleet)
    check_eq({k: v for k, v in after.items() if k in first}, first,
             "exporting new recordings rewrote none of the old files (content, mtime, inode)")
    for path, _ in recs:
        rid = recording_id(path)
        check(rid and str(uuid.UUID(rid)) == rid, "meta recording_id is a UUID", rid)
        for table in ("traces", "strings", "recordings", "eager_ops"):
            check(os.path.exists(os.path.join(fleet, table, "recording=%s" % rid, "part-0.csv")),
                  "%s/recording=%s/part-0.csv" % (table, rid))
        db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        n = db.execute("SELECT count(*) FROM traces").fetchone()[0]
        db.close()
        with open(os.path.join(fleet, "traces", "recording=%s" % rid, "part-0.csv"), newline="") as fh:
            check_eq(len(fh.read().splitlines()) - 1, n, "rows of traces' partition")
    rc, out, err = export(fleet, *[p for p, _ in recs])
    check_eq((rc, out.strip()), (0, "0 exported, %d already in '%s'" % (len(recs), fleet)), "the same export again")
    check_eq(snapshot(fleet), after, "the same export again changed no file")


def engine_rows(cur):
    cols = [c[0] for c in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def duckdb_queries(fleet, queries=QUERIES):
    import duckdb
    con = duckdb.connect()
    con.execute("SET file_search_path = '%s'" % fleet)
    with open(os.path.join(fleet, "_load", "duckdb.sql")) as fh:
        con.execute(fh.read())
    return {q: engine_rows(con.execute(sql_text(q))) for q in queries}


def sql_text(q):
    with open(os.path.join(SQL_DIR, q + ".sql")) as fh:
        return fh.read()


def report_of(path):
    rc, out, err = agtest.agprof_cmd("report", "--format", "json", path)
    check_eq(rc, 0, "agprof report %s (%s)" % (path, err.strip()))
    return json.loads(out)


def expected_lines(reports):
    """{(file, line): [recordings, traces, eager_ops, eager_ns]} as agprof's reports place them."""
    lines = {}
    for rid, rep in reports.items():
        seen = set()

        def add(loc, traces=0, ops=0, ns=0):
            if not loc:
                return
            key = (loc["file"], loc["line"])
            e = lines.setdefault(key, [0, 0, 0, 0])
            if key not in seen:
                seen.add(key)
                e[0] += 1
            e[1] += traces
            e[2] += ops
            e[3] += ns
        for f in rep["functions"]:
            add(f["first_location"], traces=1)
            for r in f["retraces"]:
                add(r["location"], traces=1)
        for s in rep["eager_sites"]:
            add(s["location"], ops=s["count"], ns=s["total_ns"])
    return lines


def check_results(res, recs, reports, engine):
    by_id = {r["recording"]: r for r in res["summary"]}
    fields = ("traces", "trace_ns", "function_calls", "eager_ops", "eager_ns")
    for path, oracle in recs:
        rid = recording_id(path)
        row, rep = by_id.get(rid, {}), reports[rid]
        name = "%s %s" % (engine, os.path.basename(path))
        check_eq(row.get("traces"), sum(oracle.values()), "%s: summary traces = TensorFlow's count" % name)
        check_eq(row.get("retraces"), sum(len(f["retraces"]) for f in rep["functions"]),
                 "%s: summary retraces = agprof's" % name)
        check_eq({k: row.get(k) for k in fields}, {k: rep["session"][k] for k in fields},
                 "%s: summary = agprof report's session" % name)
        check_eq(row.get("status"), "complete", "%s: status" % name)
    counts = {}
    for _, oracle in recs:
        for fn, n in oracle.items():
            counts.setdefault(fn, []).append(n)
    want = sorted((fn, len(c), max(c), min(c)) for fn, c in counts.items() if max(c) > min(c))
    got = sorted((r["function"], r["recordings"], r["most"], r["fewest"]) for r in res["retrace_spread"])
    check_eq(got, want, "%s: retrace_spread = TensorFlow's counts across the runs" % engine)
    check(want, "some function traces more on some runs than on others")
    day = res["retraces_by_day"]
    check_eq(sum(r["traces"] for r in day), sum(sum(o.values()) for _, o in recs), "%s: traces by day" % engine)
    check_eq(sum(r["recordings"] for r in day), len(recs), "%s: recordings by day" % engine)
    want_lines = expected_lines(reports)
    rows = res["expensive_lines"]
    check_eq(len(rows), min(20, len(want_lines)), "%s: expensive_lines rows" % engine)
    for r in rows:
        e = want_lines.get((r["file"], r["line"]))
        check_eq([r["recordings"], r["traces"], r["eager_ops"], r["eager_ns"]], e,
                 "%s: expensive_lines %s:%s = agprof's reports" % (engine, r["file"], r["line"]))
    check_eq([r["total_ns"] for r in rows], sorted((r["total_ns"] for r in rows), reverse=True),
             "%s: expensive_lines most expensive first" % engine)


def spark_queries(jobs):
    """[{name: rows}] of each job (folder, {name: SQL}) in one Spark session (local, 2 workers) over
    the folder's views (_load/spark.sql, its paths made absolute), or None when pyspark or java is missing."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        print("skip the Spark part: no pyspark in %s (./setup installs it)" % sys.executable)
        return None
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        print("skip the Spark part: no java (./setup installs Debian's default-jre-headless)")
        return None
    spark = (SparkSession.builder.master("local[2]").appName("agprof-fleet")
             .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
             # list each view's 51 partitions here, not in a Spark job of its own: 5 s, not 16, for 37 views
             .config("spark.sql.sources.parallelPartitionDiscovery.threshold", "100000").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    out = []
    try:
        for folder, queries in jobs:
            with open(os.path.join(folder, "_load", "spark.sql")) as fh:
                loader = fh.read().replace("path '", "path '%s/" % os.path.abspath(folder))
            for stmt in loader.split(";\n"):
                if stmt.strip():
                    spark.sql(stmt)
            out.append({q: [r.asDict() for r in spark.sql(sql).collect()] for q, sql in queries.items()})
        return out
    finally:
        spark.stop()


def one_line_error(err):
    lines = err.strip().splitlines()
    return len(lines) == 1 and lines[0].startswith("error: ")


def check_refusals(d, fleet, recs):
    path = recs[0][0]
    cut = os.path.join(d, "truncated.agprof")
    with open(path, "rb") as fh:
        data = fh.read()
    with open(cut, "wb") as fh:
        fh.write(data[:len(data) * 4 // 5])  # its schema and first pages read
    before = snapshot(fleet)
    rc, out, err = export(fleet, cut)
    check(rc == 2 and one_line_error(err) and "holds from another recording" in err,
          "the same id from other content: refused in one line, exit 2", (rc, err))
    check_eq(snapshot(fleet), before, "a refused export wrote nothing")
    twice = os.path.join(d, "copy.agprof")
    shutil.copyfile(path, twice)
    lone = os.path.join(d, "lone")
    rc, out, err = export(lone, path, twice)
    check(rc == 2 and one_line_error(err) and "same recording id" in err,
          "two recordings with one id on the command line: refused in one line, exit 2", (rc, err))
    check_eq(snapshot(lone) if os.path.isdir(lone) else {}, {}, "nothing written for a refused command line")
    damaged = os.path.join(d, "damaged")
    rc, out, err = export(damaged, cut)
    check(rc == 0 and "damaged" in err, "a truncated recording is exported, with a warning", (rc, err))
    rid = recording_id(path)
    with open(os.path.join(damaged, "recordings", "recording=%s" % rid, "part-0.csv")) as fh:
        text = fh.read()
    check('"damaged","truncated' in text, "its recordings row says damaged and truncated", text)
    rc, out, err = export(fleet, "/nonexistent/x.agprof")
    check(rc == 2 and one_line_error(err), "a missing recording: one line, exit 2", (rc, err))


def check_old_schema(d, fleet):
    """An old schema-1 recording: named by its content, the current columns, in the same folder."""
    base = os.path.join(agtest.SOURCE_ROOT, "tests", "fuzz", "base.agprof")
    ids = []
    for name in ("old1", "old2"):
        out = os.path.join(d, name)
        rc, _, err = export(out, base)
        check_eq(rc, 0, "export --fleet of a schema-1 recording (%s)" % err.strip())
        ids.append(os.listdir(os.path.join(out, "traces")))
    check_eq(ids[0], ids[1], "a recording without recording_id has the same id at every export")
    with open(os.path.join(d, "old1", "traces", "_schema.ddl")) as a, open(os.path.join(fleet, "traces", "_schema.ddl")) as b:
        check_eq(a.read(), b.read(), "an old recording's tables have the current columns")
    rc, _, err = export(fleet, base)
    check_eq(rc, 0, "the old recording joins the fleet (%s)" % err.strip())
    return base


def hostile_copy(d, path):
    """A copy with a new id and values no writer makes: text in a time, bytes that are not UTF-8, a NUL."""
    out = os.path.join(d, "hostile.agprof")
    shutil.copyfile(path, out)
    db = sqlite3.connect(out)
    db.execute("UPDATE meta SET value = ? WHERE key = 'recording_id'", (str(uuid.uuid4()),))
    db.execute("UPDATE traces SET start_ns = 'not a time' WHERE id = (SELECT min(id) FROM traces)")
    db.execute("UPDATE strings SET text = 'we\"ird,' || char(10) || 'name \\N' || char(0) || 'x' || CAST(x'ff' AS TEXT)"
               " WHERE id = (SELECT name_id FROM functions ORDER BY id LIMIT 1)")
    db.commit()
    db.close()
    return out


HOSTILE_NAME = ("SELECT s.text AS text FROM functions f JOIN strings s ON s.recording = f.recording"
                " AND s.id = f.name_id ORDER BY f.id LIMIT 1")


def check_hostile(d, path):
    import duckdb
    hostile = hostile_copy(d, path)
    out = os.path.join(d, "hostile")
    rc, _, err = export(out, hostile)
    check_eq(rc, 0, "export --fleet of a recording with hostile values (%s)" % err.strip())
    con = duckdb.connect()
    con.execute("SET file_search_path = '%s'" % out)
    with open(os.path.join(out, "_load", "duckdb.sql")) as fh:
        con.execute(fh.read())
    name = con.execute(HOSTILE_NAME).fetchone()[0]
    check_eq(name, 'we"ird,\nname \\N\ufffdx\ufffd', "DuckDB reads quotes, commas, newlines, a NUL and bad bytes")
    nulls = con.execute("SELECT count(*) FROM traces WHERE start_ns IS NULL").fetchone()[0]
    check_eq(nulls, 1, "a time that is text is NULL")
    check_eq(con.execute("SELECT values_nulled FROM recordings").fetchone()[0], 1, "and counted in recordings")
    return out, name


def unperturbed():
    """No MALLOC_PERTURB_ in this process (meson sets it): glibc would fill each of DuckDB's CSV buffers,
    and its queries took 44 s, not 0.3 (mallopt M_PERTURB; the agprof commands it starts keep it)."""
    try:
        ctypes.CDLL(None).mallopt(-6, 0)
    except (OSError, AttributeError):  # not glibc: no such thing to undo
        pass


def main():
    agtest.need_agprof()
    unperturbed()
    d = agtest.tmpdir()
    recs, windows = record(d)
    phase("recorded")
    check_own(recs, windows)
    fleet = os.path.join(d, "fleet")
    check_layout(fleet, recs)
    check_refusals(d, fleet, recs)
    phase("exported")
    try:
        import duckdb  # noqa: F401
    except ImportError:
        if agtest.agtestlib._failures:
            agtest.finish("fleet_export")
        print("skip fleet_export's engines: no duckdb module in %s (./setup installs it)" % sys.executable)
        sys.exit(77)
    reports = {recording_id(p): report_of(p) for p, _ in recs}
    phase("agprof report of each")
    mine = duckdb_queries(fleet)
    check_results(mine, recs, reports, "DuckDB")
    hostile_dir, name = check_hostile(d, recs[0][0])
    phase("DuckDB")
    hostile_sql = {"name": HOSTILE_NAME, "nulls": "SELECT count(*) AS n FROM traces WHERE start_ns IS NULL"}
    spark = spark_queries([(fleet, {q: sql_text(q) for q in QUERIES}), (hostile_dir, hostile_sql)])
    if spark is not None:
        check_results(spark[0], recs, reports, "Spark")
        for q in QUERIES:
            check_eq(spark[0][q], mine[q], "Spark's %s = DuckDB's" % q)
        check_eq((spark[1]["name"][0]["text"], spark[1]["nulls"][0]["n"]), (name, 1),
                 "Spark reads the hostile values as DuckDB does")
    phase("Spark")
    base = check_old_schema(d, fleet)
    both = duckdb_queries(fleet, ["summary"])
    old = [r for r in both["summary"] if r["recording"] not in reports]
    rep = report_of(base)
    check_eq([(r["traces"], r["function_calls"]) for r in old],
             [(rep["session"]["traces"], rep["session"]["function_calls"])],
             "the schema-1 recording's summary = agprof's report")
    agtest.finish("fleet_export")


if __name__ == "__main__":
    main()
