#!/usr/bin/env python3
"""grow_traces.py - a real recording scaled to N traces of one function.

    python3 bench/scale/grow_traces.py SOURCE.agprof N OUT.agprof

Takes the function with the most traces in SOURCE (record
samples/retrace_scalar.py for one that retraces on a Python float) and
repeats its last trace until the function has N traces: each copy gets its
own graph function (a new tf name), its graph constants, its inputs with the
Python value changed (so every copy is a python-value retrace, as in a loop
that passes a new float each step), and one graph call, all later in time
than the one before.  The recording stays valid: every id is unique, every
reference resolves, times increase.  Everything is done in SQL, so a million
traces take seconds.
"""
import os
import shutil
import sqlite3
import sys


def grow(src, n, out):
    if os.path.exists(out):
        os.remove(out)
    shutil.copyfile(src, out)
    db = sqlite3.connect(out)
    c = db.cursor()
    fid, have = c.execute("SELECT function_id, count(*) FROM traces GROUP BY function_id "
                          "ORDER BY count(*) DESC LIMIT 1").fetchone()
    last = c.execute("SELECT max(id) FROM traces WHERE function_id = ?", (fid,)).fetchone()[0]
    t0, t1 = c.execute("SELECT start_ns, end_ns FROM traces WHERE id = ?", (last,)).fetchone()
    gf = c.execute("SELECT id FROM graph_functions WHERE trace_id = ?", (last,)).fetchone()[0]
    step = max(t1 - t0, 1000) * 2
    add = max(n - have, 0)
    base = {t: c.execute("SELECT coalesce(max(%s), 0) FROM %s" % (k, t)).fetchone()[0]
            for t, k in [("traces", "id"), ("graph_functions", "id"), ("strings", "id"),
                         ("function_calls", "id")]}
    end = c.execute("SELECT max(m) FROM (SELECT max(end_ns) m FROM traces UNION ALL "
                    "SELECT max(end_ns) FROM function_calls)").fetchone()[0]
    shift = end - t0 + step
    c.execute("CREATE TEMP TABLE k(i INTEGER PRIMARY KEY)")
    c.execute("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < ?) "
              "INSERT INTO k SELECT i FROM r", (add,))
    c.execute("INSERT INTO strings(id, text) SELECT ? + i, 'grown_' || i || '_' || "
              "(SELECT text FROM strings WHERE id = (SELECT name_id FROM graph_functions WHERE id = ?)) FROM k",
              (base["strings"], gf))
    cols = [r[1] for r in c.execute("PRAGMA table_info(traces)")]
    sel = {"id": "? + i", "start_ns": "start_ns + ? + i * ?", "end_ns": "end_ns + ? + i * ?",
           "object_trace_no": "object_trace_no + i", "tf_name_id": "? + i",
           "signature": "replace(signature, 'Literal[', 'Literal[' || i || '.5 + ')"}
    args = {"id": (base["traces"],), "start_ns": (shift, step), "end_ns": (shift, step),
            "tf_name_id": (base["strings"],)}
    exprs, params = [], []
    for col in cols:
        exprs.append(sel.get(col, col))
        params.extend(args.get(col, ()))
    c.execute("INSERT INTO traces(%s) SELECT %s FROM traces, k WHERE traces.id = ?"
              % (",".join(cols), ",".join(exprs)), params + [last])
    c.execute("INSERT INTO trace_inputs(trace_id, position, name, kind, dtype, shape, value) "
              "SELECT ? + i, position, name, kind, dtype, shape, "
              "CASE WHEN kind = 'python' THEN i || '.5' ELSE value END FROM trace_inputs, k WHERE trace_id = ?",
              (base["traces"], last))
    gcols = [r[1] for r in c.execute("PRAGMA table_info(graph_functions)")]
    gsel = {"id": "? + i", "name_id": "? + i", "trace_id": "? + i", "created_ns": "created_ns + ? + i * ?",
            "function_def": "NULL", "parent_id": "NULL"}
    gargs = {"id": (base["graph_functions"],), "name_id": (base["strings"],), "trace_id": (base["traces"],),
             "created_ns": (shift, step)}
    exprs, params = [], []
    for col in gcols:
        exprs.append(gsel.get(col, col))
        params.extend(gargs.get(col, ()))
    c.execute("INSERT INTO graph_functions(%s) SELECT %s FROM graph_functions, k WHERE graph_functions.id = ?"
              % (",".join(gcols), ",".join(exprs)), params + [gf])
    c.execute("INSERT INTO graph_constants(graph_function_id, node_name, dtype, value) "
              "SELECT ? + i, node_name, dtype, CASE WHEN node_name LIKE 'mul/%' THEN i || '.5' ELSE value END "
              "FROM graph_constants, k WHERE graph_function_id = ?", (base["graph_functions"], gf))
    call = c.execute("SELECT id FROM function_calls WHERE graph_function_id = ? ORDER BY id LIMIT 1",
                     (gf,)).fetchone()
    if call:
        fcols = [r[1] for r in c.execute("PRAGMA table_info(function_calls)")]
        fsel = {"id": "? + i", "start_ns": "start_ns + ? + i * ?", "end_ns": "end_ns + ? + i * ?",
                "graph_function_id": "? + i", "name_id": "? + i", "kernel_detail": "0"}
        fargs = {"id": (base["function_calls"],), "start_ns": (shift, step), "end_ns": (shift, step),
                 "graph_function_id": (base["graph_functions"],), "name_id": (base["strings"],)}
        exprs, params = [], []
        for col in fcols:
            exprs.append(fsel.get(col, col))
            params.extend(fargs.get(col, ()))
        c.execute("INSERT INTO function_calls(%s) SELECT %s FROM function_calls, k WHERE function_calls.id = ?"
                  % (",".join(fcols), ",".join(exprs)), params + [call[0]])
    new_end = shift + add * step + t1
    c.execute("UPDATE processes SET end_ns = max(coalesce(end_ns, 0), ?) WHERE pid = "
              "(SELECT pid FROM traces WHERE id = ?)", (new_end, last))
    c.execute("UPDATE meta SET value = max(CAST(value AS INTEGER), ?) WHERE key = 'end_ns'", (new_end,))
    db.commit()
    db.close()
    return fid, have, add


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: grow_traces.py SOURCE.agprof N OUT.agprof")
    fid, have, add = grow(sys.argv[1], int(sys.argv[2]), sys.argv[3])
    print("function %d: %d traces + %d copies" % (fid, have, add))


if __name__ == "__main__":
    main()
