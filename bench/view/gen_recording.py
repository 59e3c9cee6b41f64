#!/usr/bin/env python3
"""Generate a schema-valid synthetic agprof recording for the view benchmark
and the TUI tests.

usage: gen_recording.py SCHEMA_SQL OUT.agprof [EVENTS] [SECONDS] [CPU_KERNELS]

The workload it imitates: a training loop on the Python main thread; each
step dispatches 8 eager ops, then calls the graph function of train_step,
during which the GPU runs kernels on two streams and a copy, and every tenth
step a tf.py_function runs on a TensorFlow executor thread.  train_step is
traced three times (two retraces: a shape change, then a Python value), and
evaluate once.  CPU_KERNELS (default 0) adds that many CPU kernels to each
graph call (schema 4's kernels table, on the two executor threads in turn,
graph nodes with source lines), on top of EVENTS.  Rows are made by recursive CTEs inside SQLite, so ten million
events take seconds, not minutes.
"""
import os
import sqlite3
import sys

PER_STEP = 8 + 1 + 6 + 1  # eager ops, call, kernels, copy (+0.1 blackbox)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    schema, out = sys.argv[1], sys.argv[2]
    events = int(sys.argv[3]) if len(sys.argv) > 3 else 10_000_000
    seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 600.0
    cpu_kernels = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    steps = max(10, events // PER_STEP)
    t0 = 1_000_000_000_000
    period = int(seconds * 1e9 / steps)
    if os.path.exists(out):
        os.unlink(out)
    db = sqlite3.connect(out)
    db.executescript(open(schema).read())
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    pid, main_tid = 4242, 4242
    end = t0 + steps * period + period
    meta = {
        "schema_version": "1", "agprof_version": "0.1.0",
        "argv": '["python","train.py"]', "cwd": "/tmp", "host": "bench",
        "start_wall_ns": "1764500000000000000", "start_ns": str(t0), "end_ns": str(end),
        "exit_status": "0", "exit_signal": "0", "dropped_events": "0",
        "python_version": "3.11.9", "tf_version": "2.21.0", "tf_status": "hooked",
        "gpu_status": "on",
    }
    db.executemany("INSERT INTO meta VALUES (?,?)", meta.items())
    db.execute("INSERT INTO processes (pid, ppid, argv, start_ns, end_ns, exit_status,"
               " python_version, tf_version, tf_status, gpu_status) VALUES"
               " (?,1,'[\"python\",\"train.py\"]',?,?,0,'3.11.9','2.21.0','hooked','on')",
               (pid, t0, end))
    threads = [(main_tid, "python3", "python-main"), (4250, "tf_inter_op", "tf-executor"),
               (4251, "tf_intra_op", "tf-executor"), (4260, "tf_data_iterator", "tf-data"),
               (4270, "cupti_worker", "gpu")]
    db.executemany("INSERT INTO threads VALUES (?,?,?,?)", [(pid, t, n, r) for t, n, r in threads])
    strings = ["train.py", "train_step", "evaluate", "__inference_train_step_11",
               "__inference_train_step_27", "__inference_train_step_43", "__inference_evaluate_60",
               "MatMul", "AddV2", "Relu", "ReadVariableOp", "Mul", "Sum", "Cast", "AssignSubVariableOp",
               "EagerPyFunc", "EagerPyFunc_node_3", "volta_sgemm_128x64_nn", "relu_kernel",
               "reduce_sum_kernel", "/job:localhost/replica:0/task:0/device:GPU:0", "main"]
    sid = {s: i + 1 for i, s in enumerate(strings)}
    db.executemany("INSERT INTO strings VALUES (?,?)", [(i, s) for s, i in sid.items()])
    db.execute("INSERT INTO callsites(id, file_id, line, func_id) VALUES (1,?,42,?)", (sid["train.py"], sid["main"]))
    db.execute("INSERT INTO callsites(id, file_id, line, func_id) VALUES (2,?,37,?)", (sid["train.py"], sid["main"]))
    db.execute("INSERT INTO functions VALUES (1,?,?,?,10)", (pid, sid["train_step"], sid["train.py"]))
    db.execute("INSERT INTO functions VALUES (2,?,?,?,25)", (pid, sid["evaluate"], sid["train.py"]))
    # Traces: train_step at steps 0, steps/3 (shape), 2*steps/3 (python value); evaluate at steps/2.
    tr = [(1, 1, 0, 1, "__inference_train_step_11", "x: TensorSpec(shape=(64, 20), dtype=tf.float32), lr: Literal[0.5]"),
          (2, 1, steps // 3, 2, "__inference_train_step_27", "x: TensorSpec(shape=(8, 20), dtype=tf.float32), lr: Literal[0.5]"),
          (3, 1, 2 * steps // 3, 3, "__inference_train_step_43", "x: TensorSpec(shape=(8, 20), dtype=tf.float32), lr: Literal[0.35]"),
          (4, 2, steps // 2, 1, "__inference_evaluate_60", "x: TensorSpec(shape=(64, 20), dtype=tf.float32)")]
    for tid_, fn, step, no, tfname, sig in tr:
        s = t0 + step * period + period * 30 // 100
        db.execute("INSERT INTO traces (id, function_id, pid, tid, start_ns, end_ns, function_object,"
                   " object_trace_no, tf_name_id, signature, callsite_id) VALUES (?,?,?,?,?,?,?,?,?,?,1)",
                   (tid_, fn, pid, main_tid, s, s + period * 5 // 100, 100 + fn, no, sid[tfname], sig))
        db.execute("INSERT INTO graph_functions (id, pid, name_id, role, trace_id, function_id, created_ns,"
                   " node_count) VALUES (?,?,?,'inference',?,?,?,12)", (tid_, pid, sid[tfname], tid_, fn, s))
    inputs = [(1, 0, "x", "tensor", "float32", "[64,20]", None), (1, 1, "lr", "python", None, None, "0.5"),
              (2, 0, "x", "tensor", "float32", "[8,20]", None), (2, 1, "lr", "python", None, None, "0.5"),
              (3, 0, "x", "tensor", "float32", "[8,20]", None), (3, 1, "lr", "python", None, None, "0.35"),
              (4, 0, "x", "tensor", "float32", "[64,20]", None)]
    db.executemany("INSERT INTO trace_inputs VALUES (?,?,?,?,?,?,?)", inputs)
    db.execute("INSERT INTO blackbox_nodes VALUES (1,1,'EagerPyFunc_node_3','EagerPyFunc','pyfunc_0')")
    cte = "WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < ?) "
    P = period
    # Eager ops: 8 per step in the first 30% of the step.
    if db.execute("SELECT 1 FROM sqlite_schema WHERE name = 'eager_op_rows'").fetchone():
        # schema 6, as the writer stores them: one key per op type, starts after t0, blocks of 1,024 ids
        db.executemany("INSERT INTO eager_op_keys (id, pid, tid, op_id, device_id, callsite_id, base_ns)"
                       " VALUES (?, ?, ?, ?, ?, 2, ?)",
                       [(k + 1, pid, main_tid, sid["MatMul"] + k, sid["/job:localhost/replica:0/task:0/device:GPU:0"],
                         t0) for k in range(8)])
        db.execute(cte + "INSERT INTO eager_op_rows (key, start, dur, flags)"
                   " SELECT 1 + i % 8, (i / 8) * ? + (i % 8) * ?, ?, (i % 97) = 0 FROM s",
                   (steps * 8 - 1, P, P * 3 // 80, P * 2 // 80))
        db.execute("INSERT INTO eager_op_blocks (pid, tid, first_id, last_id, min_start_ns, max_start_ns)"
                   " SELECT ?, ?, min(id), max(id), ? + min(start), ? + max(start) FROM eager_op_rows GROUP BY id / 1024",
                   (pid, main_tid, t0, t0))
    else:
        db.execute(cte + "INSERT INTO eager_ops (pid, tid, start_ns, end_ns, op_id, device_id, callsite_id, slow_path)"
                   " SELECT ?, ?, ? + (i / 8) * ? + (i % 8) * ?, ? + (i / 8) * ? + (i % 8) * ? + ?,"
                   " ? + (i % 8), ?, 2, (i % 97) = 0 FROM s",
                   (steps * 8 - 1, pid, main_tid, t0, P, P * 3 // 80, t0, P, P * 3 // 80, P * 2 // 80,
                    sid["MatMul"], sid["/job:localhost/replica:0/task:0/device:GPU:0"]))
    # Graph function calls: one per step, 35%..95%; the graph used follows the traces.
    db.execute(cte + "INSERT INTO function_calls (pid, tid, start_ns, end_ns, graph_function_id, name_id, callsite_id)"
               " SELECT ?, ?, ? + i * ? + ?, ? + i * ? + ?,"
               " CASE WHEN i < ? THEN 1 WHEN i < ? THEN 2 ELSE 3 END,"
               " CASE WHEN i < ? THEN ? WHEN i < ? THEN ? ELSE ? END, 1 FROM s",
               (steps - 1, pid, main_tid, t0, P, P * 35 // 100, t0, P, P * 95 // 100,
                steps // 3, 2 * steps // 3, steps // 3, sid["__inference_train_step_11"],
                2 * steps // 3, sid["__inference_train_step_27"], sid["__inference_train_step_43"]))
    # Black box: every tenth step on an executor thread, inside the call.
    db.execute(cte + "INSERT INTO blackbox_execs (pid, tid, start_ns, end_ns, node_id, op_type_id)"
               " SELECT ?, 4250, ? + i * 10 * ? + ?, ? + i * 10 * ? + ?, ?, ? FROM s",
               (steps // 10 - 1, pid, t0, P, P * 50 // 100, t0, P, P * 60 // 100,
                sid["EagerPyFunc_node_3"], sid["EagerPyFunc"]))
    # GPU: 6 kernels per step alternating streams 7 and 13, one HtoD copy on stream 14.
    db.execute(cte + "INSERT INTO gpu_activity (pid, kind, name_id, device, context, stream, start_ns, end_ns,"
               " correlation_id, grid_x, grid_y, grid_z, block_x, block_y, block_z)"
               " SELECT ?, 'kernel', ? + (i % 3), 0, 1, CASE WHEN i % 2 THEN 13 ELSE 7 END,"
               " ? + (i / 6) * ? + ? + (i % 6) * ?, ? + (i / 6) * ? + ? + (i % 6) * ? + ?, i, 128, 1, 1, 256, 1, 1 FROM s",
               (steps * 6 - 1, pid, sid["volta_sgemm_128x64_nn"], t0, P, P * 40 // 100, P * 9 // 100,
                t0, P, P * 40 // 100, P * 9 // 100, P * 7 // 100))
    db.execute(cte + "INSERT INTO gpu_activity (pid, kind, device, context, stream, start_ns, end_ns,"
               " correlation_id, bytes, copy_kind)"
               " SELECT ?, 'memcpy', 0, 1, 14, ? + i * ? + ?, ? + i * ? + ?, -i, 5120, 'HtoD' FROM s",
               (steps - 1, pid, t0, P, P * 36 // 100, t0, P, P * 39 // 100))
    if cpu_kernels > 0:
        add_cpu_kernels(db, cte, pid, t0, P, steps, cpu_kernels)
    db.commit()
    db.execute("ANALYZE")
    db.commit()
    db.close()


def add_cpu_kernels(db, cte, pid, t0, P, steps, per_call):
    """per_call kernels in each call (35%..95% of its step), each 1/2 of its slot,
    on executor threads 4250 and 4251 in turn; node k of the call's graph, whose
    ops were created on train.py lines 11..22.  Call i is function_calls row i + 1."""
    ops = ["MatMul", "AddV2", "Relu", "ReadVariableOp", "Mul", "Sum", "Cast", "AssignSubVariableOp",
           "BiasAdd", "Softmax", "Sub", "Identity"]
    nodes = [(g * 12 + k + 1, pid, g + 1, "dense_%d/%s" % (k, op), op, "train.py", 11 + k)
             for g in range(3) for k, op in enumerate(ops)]
    db.executemany("INSERT INTO graph_nodes VALUES (?,?,?,?,?,?,?)", nodes)
    slot = P * 60 // 100 // per_call
    db.execute(cte + "INSERT INTO kernels (pid, tid, start_ns, end_ns, node_id, call_id)"
               " SELECT ?, 4250 + (i % 2), ? + (i / ?) * ? + ? + (i % ?) * ?, ? + (i / ?) * ? + ? + (i % ?) * ? + ?,"
               " (CASE WHEN i / ? < ? THEN 0 WHEN i / ? < ? THEN 12 ELSE 24 END) + (i % ?) % 12 + 1, i / ? + 1 FROM s",
               (steps * per_call - 1, pid, t0, per_call, P, P * 35 // 100, per_call, slot,
                t0, per_call, P, P * 35 // 100, per_call, slot, max(1, slot // 2),
                per_call, steps // 3, per_call, 2 * steps // 3, per_call, per_call))
    db.execute("CREATE INDEX IF NOT EXISTS kernels_call ON kernels(call_id, start_ns)")
    db.execute("CREATE INDEX IF NOT EXISTS kernels_thread ON kernels(pid, tid, start_ns)")


if __name__ == "__main__":
    main()
