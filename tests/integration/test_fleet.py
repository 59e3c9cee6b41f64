"""Fleet scale: agprof's job queries (analyzer/model/sql/) run unchanged in
DuckDB over several recordings, and give what agprof itself reports.

Two samples are recorded (retrace_dtype.py: 3 traces of `normalize`;
retrace_shape.py: 4 traces of `predict`), merged into one recording (one
rank each), exported with `agprof export --format csv`, loaded into DuckDB
by the export's load.sql, and the views steps and collectives created from
their files.  ranks.sql in DuckDB must give each rank the traces its
sample's TensorFlow counted (experimental_get_tracing_count(), the oracle)
and the same rows as `agprof report --format json` ("ranks");
rank_retrace.sql must name both functions (each traced on one rank only);
its result written to Parquet reads back.  The CSV files hold every row of
their tables.  Without the duckdb module (./setup installs it) the DuckDB
part is skipped (exit 77) once the export is checked.
"""
import csv
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq  # noqa: E402

SQL_DIR = os.path.join(agtest.SOURCE_ROOT, "analyzer", "model", "sql")
SAMPLES = ["retrace_dtype.py", "retrace_shape.py"]


def sql_file(name):
    with open(os.path.join(SQL_DIR, name + ".sql")) as fh:
        return fh.read()


def record(d):
    paths, oracles = [], []
    for s in SAMPLES:
        proc, db, oracle = agtest.run_sample_recorded(s)
        check_eq(proc.returncode, 0, "agprof run %s" % s)
        db.close()
        paths.append(agtest.last_recording)
        oracles.append(sum(f["tracing_count"] for f in oracle["functions"].values()))
    job = os.path.join(d, "fleet.agprof")
    rc, out, err = agtest.agprof_cmd("merge", "-o", job, *paths)
    check_eq(rc, 0, "agprof merge (%s)" % err.strip())
    return job, oracles


def check_export(job, d):
    out = os.path.join(d, "csv")
    rc, _, err = agtest.agprof_cmd("export", "--format", "csv", "-o", out, job)
    check_eq(rc, 0, "agprof export --format csv (%s)" % err.strip())
    db = sqlite3.connect(job)
    for table in ("traces", "eager_ops", "strings", "processes", "ranks"):
        with open(os.path.join(out, table + ".csv"), newline="") as fh:
            rows = list(csv.reader(fh))
        n = db.execute("SELECT count(*) FROM %s" % table).fetchone()[0]
        check_eq(len(rows) - 1, n, "rows of %s.csv" % table)
    db.close()
    check(os.path.exists(os.path.join(out, "load.sql")), "load.sql beside the CSV files")
    return out


def check_duckdb(duckdb, job, out, oracles, d):
    con = duckdb.connect()
    with open(os.path.join(out, "load.sql")) as fh:
        con.execute(fh.read())
    for view in ("steps", "collectives"):
        con.execute("CREATE VIEW %s AS %s" % (view, sql_file(view)))
    cur = con.execute(sql_file("ranks"))
    cols = [c[0] for c in cur.description]
    rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    check_eq([r["traces"] for r in rows], oracles, "DuckDB ranks.sql: traces per rank = TensorFlow's counts")
    rc, rep, err = agtest.agprof_cmd("report", "--format", "json", job)
    check_eq(rc, 0, "agprof report on the merge")
    mine = json.loads(rep)["ranks"] if rc == 0 else []
    for field in ("rank", "traces", "retraces", "eager_ops", "eager_ns", "trace_ns", "active_ns"):
        check_eq([r[field] for r in rows], [r[field] for r in mine], "DuckDB and agprof agree on ranks.%s" % field)
    cur = con.execute(sql_file("rank_retrace"))
    got = sorted((r[0], r[3], r[4]) for r in cur.fetchall())
    check_eq(got, [("normalize", 3, 0), ("predict", 4, 0)], "DuckDB rank_retrace.sql: (function, most, fewest)")
    pq = os.path.join(d, "ranks.parquet")
    con.execute("COPY (%s) TO '%s' (FORMAT parquet)" % (sql_file("ranks"), pq))
    check_eq(con.execute("SELECT sum(traces) FROM read_parquet('%s')" % pq).fetchone()[0], sum(oracles),
             "traces in ranks.parquet")


def main():
    agtest.need_agprof()
    d = agtest.tmpdir()
    job, oracles = record(d)
    out = check_export(job, d)
    try:
        import duckdb
    except ImportError:
        if agtest.agtestlib._failures:
            agtest.finish("fleet")
        print("skip fleet: no duckdb module in %s (./setup installs it); the export was checked" % sys.executable)
        sys.exit(77)
    check_duckdb(duckdb, job, out, oracles, d)
    agtest.finish("fleet")


if __name__ == "__main__":
    main()
