"""Compact storage of the eager ops kept as rows (issue 11, schema 6).

samples/eager_heavy.py dispatches exactly OPS/4 each of AddV2, Mul, Sub and
Maximum from step() (its oracle's extra.planned_eager_ops): the oracle.

1. A real eager loop recorded with default settings: the kept ops cost at
   most 32 bytes each, tables and indexes together (sqlite3's dbstat over
   eager_op_rows, eager_op_keys, eager_op_blocks and their indexes); no
   index on eager_op_rows; the eager_ops view holds every op the program
   counted, each op type exactly; every row lies in a block of its thread
   that bounds its start (what the viewer's seeks rely on).
2. agprof merge of two schema 6 recordings: every op of both, the blocks
   still bound their rows (ids and times moved with them).
3. The same run in the layout of schema 5 (an eager_ops table with its
   indexes, built here from the view): report reads it with the same
   counts; two of them merge into a schema 6 file through the view, whose
   blocks bound the rows too.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
import agtestlib  # noqa: E402
from agtest import check, check_eq, q1  # noqa: E402

OPS = 24000
STEP_OPS = ("AddV2", "Mul", "Sub", "Maximum")
MAX_BYTES_PER_OP = 32
EAGER_OBJECTS = ("eager_op_rows", "eager_op_keys", "eager_op_blocks", "eager_op_keys_key", "eager_op_blocks_thread")


def record(d):
    out = os.path.join(d, "loop.agprof")
    oracle = os.path.join(d, "loop.json")
    cmd = [agtest.AGPROF, "run", "-o", out, "--", agtest.PYTHON, agtest.sample("eager_heavy.py"), "--ops", str(OPS)]
    env = dict(os.environ, AGPROF_ORACLE=oracle, AGPROF_ORACLE_NO_PROFILER="1")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=agtest.SOURCE_ROOT,
                       timeout=240)
    check_eq(p.returncode, 0, "agprof exit status (%s)" % p.stderr[-800:].decode("utf-8", "replace"))
    with open(oracle) as f:
        return out, json.load(f)


def step_counts_in_file(db):
    return dict(db.execute("SELECT s.text, count(*) FROM eager_ops e JOIN strings s ON s.id = e.op_id"
                           " WHERE s.text IN (%s) GROUP BY 1" % ",".join("'%s'" % o for o in STEP_OPS)).fetchall())


def step_counts_in_report(path):
    rc, out, err = agtest.agprof_cmd("report", "--format", "json", path)
    check_eq(rc, 0, "agprof report --format json %s (%s)" % (path, err[-300:]))
    return {o["op"]: o["count"] for o in json.loads(out)["eager_ops"] if o["op"] in STEP_OPS} if rc == 0 else {}


def check_blocks_bound_rows(db, name):
    """Every row in a block of its own thread whose id range and start bounds hold it."""
    outside = q1(db, "SELECT count(*) FROM eager_ops e WHERE NOT EXISTS (SELECT 1 FROM eager_op_blocks b"
                     " WHERE b.pid = e.pid AND b.tid = e.tid AND e.id BETWEEN b.first_id AND b.last_id"
                     " AND e.start_ns BETWEEN b.min_start_ns AND b.max_start_ns)")
    check_eq(outside, 0, name + ": eager ops in no block of their thread")


def storage_case(d):
    path, oracle = record(d)
    planned = oracle["extra"]["planned_eager_ops"]
    check_eq(planned, OPS, "ops the sample planned")
    db = agtest.open_recording(path)
    agtest.check_recording_header(db)
    rows = q1(db, "SELECT count(*) FROM eager_op_rows")
    check(rows >= OPS, "every op kept as a row (no budget reached)", rows)
    check_eq(q1(db, "SELECT count(*) FROM eager_ops"), rows, "the eager_ops view: one row per eager_op_rows row")
    check_eq(step_counts_in_file(db), {op: planned // 4 for op in STEP_OPS}, "per-op counts in the file = the program's")
    check_eq(q1(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'eager_op_rows'"), 0,
             "no index on eager_op_rows")
    sizes = dict(db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall())
    eager = sum(sizes.get(n, 0) for n in EAGER_OBJECTS)
    per_op = eager / rows
    print("storage: %d kept eager ops, %.1f bytes each (%s)" % (rows, per_op, ", ".join(
        "%s %.2f" % (n, sizes.get(n, 0) / rows) for n in EAGER_OBJECTS)))
    check(per_op <= MAX_BYTES_PER_OP, "bytes per kept eager op, tables and indexes", "%.1f" % per_op,
          "<= %d" % MAX_BYTES_PER_OP)
    check_blocks_bound_rows(db, "recording")
    db.close()
    check_eq(step_counts_in_report(path), {op: planned // 4 for op in STEP_OPS}, "report's per-op counts")
    return path, planned, rows


def merge_case(d, path, planned, rows):
    merged = os.path.join(d, "merged6.agprof")
    rc, _, err = agtest.agprof_cmd("merge", "-o", merged, path, path)
    check_eq(rc, 0, "agprof merge of two schema 6 recordings (%s)" % err.strip()[-300:])
    db = agtest.open_recording(merged)
    check_eq(q1(db, "SELECT count(*) FROM eager_ops"), 2 * rows, "merged: the ops of both")
    check_eq(step_counts_in_file(db), {op: planned // 2 for op in STEP_OPS}, "merged: per-op counts")
    check_blocks_bound_rows(db, "merge of two schema 6 recordings")
    db.close()
    check_eq(step_counts_in_report(merged), {op: planned // 2 for op in STEP_OPS}, "merged report's per-op counts")




def schema5_case(d, path, planned, rows):
    old = os.path.join(d, "v5.agprof")
    agtestlib.copy_as_schema5(path, old)
    check_eq(step_counts_in_report(old), {op: planned // 4 for op in STEP_OPS}, "schema 5 layout: report's counts")
    merged = os.path.join(d, "merged5.agprof")
    rc, _, err = agtest.agprof_cmd("merge", "-o", merged, old, old)
    check_eq(rc, 0, "agprof merge of two schema 5 recordings (%s)" % err.strip()[-300:])
    db = agtest.open_recording(merged)
    check_eq(q1(db, "PRAGMA user_version"), 9, "the merge is written in schema 9")
    check_eq(q1(db, "SELECT count(*) FROM eager_op_rows"), 2 * rows, "merged schema 5 inputs: the ops of both")
    check_eq(step_counts_in_file(db), {op: planned // 2 for op in STEP_OPS}, "merged schema 5 inputs: per-op counts")
    check_blocks_bound_rows(db, "merge of two schema 5 recordings")
    db.close()
    check_eq(step_counts_in_report(merged), {op: planned // 2 for op in STEP_OPS}, "its report's per-op counts")


def main():
    agtest.need_agprof()
    d = agtest.tmpdir()
    path, planned, rows = storage_case(d)
    merge_case(d, path, planned, rows)
    schema5_case(d, path, planned, rows)
    agtest.finish("storage")


if __name__ == "__main__":
    main()
