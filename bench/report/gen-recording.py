#!/usr/bin/env python3
"""Write a large, schema-valid agprof recording for the report/check benchmark.

usage: gen-recording.py [--events N] [--seed S] SCHEMA_SQL OUTPUT

The recording looks like a long training run: a few user functions with
healthy and pathological tracing (shape, python-value and new-function-object
retraces, a jit_compile function recompiled per shape, a py_function), eager
ops spread over a few hundred source lines, graph function calls and
black-box executions.  80% of the events are eager ops, 15% function calls,
5% black-box executions.
"""
import argparse
import os
import random
import re
import sqlite3
import sys


EAGER_KEYS = {}


def insert_eager(db, rows, base):
    """Rows of (pid, tid, start, end, op, device, site, slow, ok) as the writer stores them: schema 6's
    eager_op_keys + eager_op_rows (start after base), or the eager_ops table of older schemas."""
    if not db.execute("SELECT 1 FROM sqlite_schema WHERE name = 'eager_op_rows'").fetchone():
        db.executemany("INSERT INTO eager_ops(pid,tid,start_ns,end_ns,op_id,device_id,callsite_id,slow_path,ok)"
                       " VALUES (?,?,?,?,?,?,?,?,?)", rows)
        return
    out = []
    for pid, tid, st, en, op, dev, site, slow, ok in rows:
        k = (pid, tid, op, dev, site)
        if k not in EAGER_KEYS:
            EAGER_KEYS[k] = db.execute("INSERT INTO eager_op_keys(pid,tid,op_id,device_id,callsite_id,base_ns)"
                                       " VALUES (?,?,?,?,?,?)", k + (base,)).lastrowid
        out.append((EAGER_KEYS[k], st - base, en - st, int(bool(slow)) | (0 if ok else 2)))
    db.executemany("INSERT INTO eager_op_rows(key,start,dur,flags) VALUES (?,?,?,?)", out)


def eager_blocks(db):
    """Schema 6: the writer's eager_op_blocks, one per 1,024 row ids and thread."""
    if db.execute("SELECT 1 FROM sqlite_schema WHERE name = 'eager_op_blocks'").fetchone():
        db.execute("INSERT INTO eager_op_blocks(pid, tid, first_id, last_id, min_start_ns, max_start_ns)"
                   " SELECT k.pid, k.tid, min(r.id), max(r.id), min(k.base_ns + r.start), max(k.base_ns + r.start)"
                   " FROM eager_op_rows r JOIN eager_op_keys k ON k.id = r.key GROUP BY r.id / 1024, k.pid, k.tid")


def schema_version(schema_sql):
    """AGPROF_SCHEMA_VERSION of common/db.h beside the schema (the recording says what the writer would)."""
    with open(os.path.join(os.path.dirname(os.path.abspath(schema_sql)), "db.h")) as fh:
        return int(re.search(r"#define AGPROF_SCHEMA_VERSION (\d+)", fh.read()).group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("schema")
    ap.add_argument("output")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    if os.path.exists(a.output):
        os.unlink(a.output)
    db = sqlite3.connect(a.output)
    db.executescript(open(a.schema).read())
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    strings = {}

    def s(text):
        if text not in strings:
            cur = db.execute("INSERT INTO strings(text) VALUES (?)", (text,))
            strings[text] = cur.lastrowid
        return strings[text]

    pid, tid = 4242, 4242
    t0 = 1_000_000_000
    n_eager = a.events * 80 // 100
    n_calls = a.events * 15 // 100
    n_bb = a.events - n_eager - n_calls
    step_ns = 2_000  # mean spacing between events
    end = t0 + a.events * step_ns
    meta = {"schema_version": str(schema_version(a.schema)), "agprof_version": "0.1.0", "argv": '["python","train.py"]',
            "cwd": "/home/user/project", "host": "bench", "start_wall_ns": "1700000000000000000",
            "start_ns": str(t0), "end_ns": str(end), "exit_status": "0", "exit_signal": "0",
            "dropped_events": "0", "python_version": "3.12.3", "tf_version": "2.21.0",
            "tf_status": "hooked", "gpu_status": "off", "gpu_detail": "no GPU"}
    db.executemany("INSERT INTO meta VALUES (?,?)", meta.items())
    db.execute("INSERT INTO processes(pid,ppid,argv,start_ns,end_ns,exit_status,python_version,tf_version,"
               "tf_status) VALUES (?,?,?,?,?,?,?,?,?)",
               (pid, 1, meta["argv"], t0, end, 0, "3.12.3", "2.21.0", "hooked"))
    db.execute("INSERT INTO threads VALUES (?,?,?,?)", (pid, tid, "python", "python-main"))

    src = "/home/user/project/train.py"
    sites = []
    for i in range(300):
        cur = db.execute("INSERT INTO callsites(file_id,line,func_id) VALUES (?,?,?)",
                         (s(src if i < 200 else "/home/user/project/data.py"), 10 + i, s("loop%d" % (i % 7))))
        sites.append(cur.lastrowid)
    ops = [s(o) for o in ("MatMul", "AddV2", "Mul", "Relu", "Sum", "Cast", "ReadVariableOp",
                          "AssignSubVariableOp", "Sub", "RealDiv", "Reshape", "ConcatV2")]

    # User functions and their traces.
    fn_specs = [("train_step", 40, "shape"), ("scaled", 12, "python-value"), ("body", 6, "new-function-object"),
                ("predict", 1, None), ("xla_step", 5, "jit"), ("with_pyfunc", 1, None)]
    graph_fns = []  # (graph_function_id, weight)
    tclock = t0 + 1000
    for fi, (name, ntr, cause) in enumerate(fn_specs):
        cur = db.execute("INSERT INTO functions(pid,name_id,file_id,line) VALUES (?,?,?,?)",
                         (pid, s(name), s(src), 300 + fi * 20))
        fid = cur.lastrowid
        for k in range(ntr):
            obj = 1000 + fi if cause != "new-function-object" else 5000 + k
            batch = 64 if cause not in ("shape", "jit") else 64 - k
            lr = "0.5" if cause != "python-value" else repr(round(0.5 - k * 0.01, 2))
            tfname = "__inference_%s_%d" % (name, 100 + k)
            sig = "(x: TensorSpec(shape=(%d, 20), dtype=tf.float32, name=None), lr: Literal[%s])" % (batch, lr)
            cur = db.execute(
                "INSERT INTO traces(function_id,pid,tid,start_ns,end_ns,function_object,object_trace_no,"
                "tf_name_id,signature,callsite_id,jit_compile,reduce_retracing,has_input_signature,"
                "variables_created,status) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (fid, pid, tid, tclock, tclock + 20_000_000, obj,
                 1 if cause == "new-function-object" else k + 1, s(tfname), sig, sites[fi], int(cause == "jit"),
                 0, 0, 0, "ok"))
            trid = cur.lastrowid
            tclock += a.events * step_ns // 400
            db.execute("INSERT INTO trace_inputs VALUES (?,?,?,?,?,?,?)",
                       (trid, 0, "x", "tensor", "float32", "[%d,20]" % batch, None))
            db.execute("INSERT INTO trace_inputs VALUES (?,?,?,?,?,?,?)",
                       (trid, 1, "lr", "python", None, None, lr))
            cur = db.execute("INSERT INTO graph_functions(pid,name_id,role,trace_id,function_id,created_ns,"
                             "jit_compile,node_count) VALUES (?,?,?,?,?,?,?,?)",
                             (pid, s(tfname), "inference", trid, fid, tclock, int(cause == "jit"), 30))
            gid = cur.lastrowid
            db.execute("INSERT INTO graph_constants VALUES (?,?,?,?)", (gid, "mul/y", "float", lr))
            if name == "with_pyfunc":
                db.execute("INSERT INTO blackbox_nodes(graph_function_id,node_name,op_type,token) VALUES (?,?,?,?)",
                           (gid, "EagerPyFunc", "EagerPyFunc", "pyfunc_0"))
            graph_fns.append((gid, s(tfname)))

    # Event streams, interleaved in time.
    def times(n):
        t = t0 + 5_000
        span = (end - t0 - 10_000) // max(n, 1)
        for _ in range(n):
            yield t, t + rnd.randint(span // 4, span // 2)
            t += span

    rows = []
    for st, en in times(n_eager):
        rows.append((pid, tid, st, en, ops[rnd.randrange(len(ops))], None,
                     sites[min(int(rnd.expovariate(0.05)), len(sites) - 1)], rnd.random() < 0.1, 1))
        if len(rows) == 200_000:
            insert_eager(db, rows, t0)
            rows.clear()
    insert_eager(db, rows, t0)
    rows.clear()
    eager_blocks(db)
    for st, en in times(n_calls):
        gid, nid = graph_fns[rnd.randrange(len(graph_fns))]
        rows.append((pid, tid, st, en, gid, nid, sites[rnd.randrange(10)], 1))
        if len(rows) == 200_000:
            db.executemany("INSERT INTO function_calls(pid,tid,start_ns,end_ns,graph_function_id,name_id,"
                           "callsite_id,ok) VALUES (?,?,?,?,?,?,?,?)", rows)
            rows.clear()
    db.executemany("INSERT INTO function_calls(pid,tid,start_ns,end_ns,graph_function_id,name_id,"
                   "callsite_id,ok) VALUES (?,?,?,?,?,?,?,?)", rows)
    rows.clear()
    node, optype = s("EagerPyFunc"), s("EagerPyFunc")
    for st, en in times(n_bb):
        rows.append((pid, tid + 1, st, en, node, optype))
        if len(rows) == 200_000:
            db.executemany("INSERT INTO blackbox_execs(pid,tid,start_ns,end_ns,node_id,op_type_id)"
                           " VALUES (?,?,?,?,?,?)", rows)
            rows.clear()
    db.executemany("INSERT INTO blackbox_execs(pid,tid,start_ns,end_ns,node_id,op_type_id) VALUES (?,?,?,?,?,?)",
                   rows)
    db.commit()
    db.close()
    print("%s: %d events (%d eager ops, %d function calls, %d black-box executions)"
          % (a.output, a.events, n_eager, n_calls, n_bb), file=sys.stderr)


if __name__ == "__main__":
    main()
