"""Record one sample with `agprof run` and compare the recording with the
sample's oracle (samples/oracle.py), exactly.

usage: test_sample.py SAMPLE.py [sample arguments...]

What is compared, and why it must be equal:

- Traces.  For every Python function the oracle lists, the number of
  `traces` rows of that user function (functions.name, in the sample's main
  process) equals the sum of experimental_get_tracing_count() over the
  tf.function objects wrapping it; for several objects
  (new_function_object.py, variable_creation.py) the per-object counts
  (traces grouped by function_object) equal the oracle's list, and
  object_trace_no runs 1..k within each object.

- Calls.  Each Python-side call of a tf.function executes exactly one graph
  function through TFE_Execute: `__inference_<f>_N` normally, the forward
  function `__forward_<f>_N` when the call is recorded by an eager
  GradientTape (tape_forward.py).  The backward function
  (`__inference___backward_<f>_N`, run by tape.gradient), TF-internal
  helpers (`__inference_initialize_variables_N` on a variable-creating first
  call) and nested tf.functions (executed inside the caller's graph, never
  through TFE_Execute: keras_fit.py's one_step_on_data) are not calls of
  <f>.  So: count of function_calls whose graph function belongs to the user
  function (graph_functions.function_id) with role inference, forward or
  loaded == the oracle's Python-side call counter.

- Graph-function executions by name.  The TF profiler counts, inside the
  oracle's window, the EagerExecute events with is_func=1 per function name;
  the recording's function_calls of the main process starting inside the
  same CLOCK_MONOTONIC window must match name by name (this includes the
  backward and helper functions above).

- Eager ops.  The profiler's EagerExecute events with is_func=0 in the window
  (one per TFE_Execute of a primitive op, see samples/oracle.py) == the
  recorded eager_ops rows of the main process with start_ns in the window,
  in total and per op type; those dispatched by TFE_Py_FastPathExecute_C
  (the profiler's EagerExecute nested in its TFE_Py_FastPathExecute_C event,
  _EagerConst excepted) == the recorded ops with slow_path = 0, per type.

- Call sites.  A retrace is attributed to the user line that called the
  function: for the retracing samples, every trace after the first has its
  callsite on a line marked `# agprof: <cause>`.  For eager hot loops, the
  marked line is (one of) the call site(s) dispatching the most eager ops.

plus sample-specific facts (variables created, jit_compile, black boxes...).
"""
import collections
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq, q1  # noqa: E402

RETRACE_CAUSES = {"shape", "dtype", "python-value", "python-object",
                  "input-structure", "jit-shapes"}


def user_function_rows(db, pid, name):
    return db.execute(
        "SELECT fn.id, fn.line, f.text AS file FROM functions fn "
        "JOIN strings s ON s.id = fn.name_id LEFT JOIN strings f ON f.id = fn.file_id "
        "WHERE fn.pid = ? AND s.text = ?", (pid, name)).fetchall()


def traces_of(db, fn_ids):
    if not fn_ids:
        return []
    marks = ",".join("?" * len(fn_ids))
    return db.execute(
        "SELECT t.*, c.line AS call_line, cf.text AS call_file FROM traces t "
        "LEFT JOIN callsites c ON c.id = t.callsite_id "
        "LEFT JOIN strings cf ON cf.id = c.file_id "
        "WHERE t.function_id IN (%s) ORDER BY t.start_ns, t.id" % marks, fn_ids).fetchall()


def calls_of(db, fn_ids):
    if not fn_ids:
        return 0
    marks = ",".join("?" * len(fn_ids))
    return q1(db,
              "SELECT count(*) FROM function_calls c JOIN graph_functions g "
              "ON g.id = c.graph_function_id WHERE g.function_id IN (%s) "
              "AND g.role IN ('inference', 'forward', 'loaded')" % marks, *fn_ids)


def compare_functions(db, oracle, pid, sample_name):
    per_fn = {}
    for name, want in sorted(oracle["functions"].items()):
        rows = user_function_rows(db, pid, name)
        ids = [r["id"] for r in rows]
        check_eq(len(rows), 1, "functions rows named %r in pid %d" % (name, pid))
        want_file = want.get("file")
        if rows and want_file and want_file.startswith(agtest.SAMPLES):
            r = rows[0]
            check(agtest.same_file(r["file"], want_file),
                  "functions.file of %r" % name, r["file"], want_file)
            lines = agtest.def_lines(want_file, want["line"])
            check(r["line"] in lines, "functions.line of %r" % name, r["line"],
                  " or ".join(map(str, sorted(lines))))
        traces = traces_of(db, ids)
        per_fn[name] = traces
        if want.get("tracing_count") is not None:
            check_eq(len(traces), want["tracing_count"],
                     "traces of %r (experimental_get_tracing_count)" % name)
        bad = [t["status"] for t in traces if t["status"] != "ok"]
        check_eq(bad, [], "traces of %r with status != ok" % name)
        objs = collections.OrderedDict()
        for t in traces:
            objs.setdefault(t["function_object"], []).append(t["object_trace_no"])
        if "objects" in want:
            check_eq(sorted(len(v) for v in objs.values()), sorted(want["objects"]),
                     "traces per tf.function object of %r" % name)
        for obj, nos in objs.items():
            check_eq(nos, list(range(1, len(nos) + 1)),
                     "object_trace_no sequence of %r object %#x" % (name, obj))
        check_eq(calls_of(db, ids), want["calls"],
                 "graph-function calls (inference/forward/loaded) of %r" % name)
        if ids and want_file and want_file.startswith(agtest.SAMPLES):
            sites = {r[0] for r in db.execute(
                "SELECT coalesce(f.text, '<no call site>') FROM function_calls c "
                "JOIN graph_functions g ON g.id = c.graph_function_id "
                "LEFT JOIN callsites cs ON cs.id = c.callsite_id "
                "LEFT JOIN strings f ON f.id = cs.file_id WHERE g.function_id IN (%s)"
                % ",".join(map(str, ids)))}
            check(all(agtest.same_file(x, want_file) for x in sites),
                  "call sites of %r's calls (the sample calls it)" % name,
                  sorted(sites), [want_file])
    return per_fn


def compare_window(db, oracle, pid):
    win = oracle.get("eager_window_ns")
    if not win:
        return
    t0, t1 = win
    got = q1(db, "SELECT count(*) FROM eager_ops WHERE pid = ? AND start_ns BETWEEN ? AND ?",
             pid, t0, t1)
    check_eq(got, oracle["eager_ops"], "eager ops in the profiler window (pid %d)" % pid)
    by_type = {r[0]: r[1] for r in db.execute(
        "SELECT s.text, count(*) FROM eager_ops e JOIN strings s ON s.id = e.op_id "
        "WHERE e.pid = ? AND e.start_ns BETWEEN ? AND ? GROUP BY s.text", (pid, t0, t1))}
    check_eq(by_type, oracle["eager_ops_by_type"], "eager ops by type in the window")
    fast = {r[0]: r[1] for r in db.execute(
        "SELECT s.text, count(*) FROM eager_ops e JOIN strings s ON s.id = e.op_id "
        "WHERE e.pid = ? AND e.slow_path = 0 AND e.start_ns BETWEEN ? AND ? GROUP BY s.text",
        (pid, t0, t1))}
    if oracle.get("eager_fast_path_by_type") is not None:
        check_eq(fast, oracle["eager_fast_path_by_type"],
                 "eager ops with slow_path = 0 (C fast path) by type in the window")
    # The only op of the samples that fails is the tf.data iterator's
    # IteratorGetNext at the end of the data set (OutOfRange ends a Python
    # `for` over a Dataset): one per exhausted iterator.
    failed = {r[0]: r[1] for r in db.execute(
        "SELECT s.text, count(*) FROM eager_ops e JOIN strings s ON s.id = e.op_id "
        "WHERE e.pid = ? AND e.ok = 0 AND e.start_ns BETWEEN ? AND ? GROUP BY s.text",
        (pid, t0, t1))}
    check_eq(failed, oracle["extra"].get("failed_eager_ops", {}),
             "failed eager ops (ok = 0) by type in the window")
    calls = {r[0]: r[1] for r in db.execute(
        "SELECT s.text, count(*) FROM function_calls c JOIN strings s ON s.id = c.name_id "
        "WHERE c.pid = ? AND c.start_ns BETWEEN ? AND ? GROUP BY s.text", (pid, t0, t1))}
    check_eq(calls, oracle["eager_func_calls_by_name"] or {},
             "graph-function executions by name in the window")
    unregistered = q1(db, "SELECT count(*) FROM function_calls WHERE pid = ? "
                      "AND graph_function_id IS NULL AND start_ns BETWEEN ? AND ?", pid, t0, t1)
    check_eq(unregistered, 0, "function_calls without a registered graph function")


def compare_trace_inputs(db, oracle, per_fn):
    """trace_inputs rows of each trace == the flattened arguments of the call
    that made the trace (oracle extra.trace_inputs, built by the sample from
    the very arguments it passed, see oracle.traced_with)."""
    for name, expected in (oracle["extra"].get("trace_inputs") or {}).items():
        traces = per_fn.get(name, [])
        got = []
        for t in traces:
            got.append([dict(r) for r in db.execute(
                "SELECT name, kind, dtype, shape, value FROM trace_inputs "
                "WHERE trace_id = ? ORDER BY position", (t["id"],))])
        # Tensors' `value` is not specified; compare it for python/object
        # only.  An object's value is its type name; an " at 0x..." suffix
        # (its identity, which is what the cache compares) is tolerated.
        for rows in got:
            for r in rows:
                if r["kind"] in ("tensor", "variable", "none"):
                    r["value"] = None
                elif r["kind"] == "object" and r["value"]:
                    r["value"] = re.sub(r" at 0x[0-9a-fA-F]+$", "", r["value"])
        check_eq(got, expected, "trace_inputs of each trace of %r, in trace order" % name)


def compare_trace_names(db, oracle, per_fn):
    """Every `__inference_<f>_N` the profiler saw executing was built by a
    recorded trace of <f>: its name is one of the traces' tf_name."""
    executed = oracle.get("eager_func_calls_by_name") or {}
    for name, traces in per_fn.items():
        built = {r[0] for r in db.execute(
            "SELECT s.text FROM traces t JOIN strings s ON s.id = t.tf_name_id "
            "WHERE t.id IN (%s)" % ",".join(str(t["id"]) for t in traces))} if traces else set()
        pat = re.compile(r"__inference_%s_\d+$" % re.escape(name))
        ran = {n for n in executed if pat.match(n)}
        check(ran <= built, "executed inference functions of %r built by its recorded traces"
              % name, sorted(built), "a superset of %s" % sorted(ran))
        check_eq(sum(1 for t in traces if t["tf_name_id"] is None), 0,
                 "traces of %r without tf_name" % name)


def compare_callsites(db, oracle, pid, sample_name, per_fn):
    marks = agtest.marker_lines(sample_name)
    sample_file = agtest.sample(sample_name)
    retrace_lines = set()
    for cause, lines in marks.items():
        if cause in RETRACE_CAUSES:
            retrace_lines.update(lines)
    if retrace_lines:
        for name, traces in per_fn.items():
            for t in traces:  # the first call is on the marked line too
                check(agtest.same_file(t["call_file"], sample_file)
                      and t["call_line"] in retrace_lines,
                      "call site of retrace %d of %r" % (t["object_trace_no"], name),
                      "%s:%s" % (t["call_file"], t["call_line"]),
                      "%s:%s" % (sample_file, sorted(retrace_lines)))
    hot = marks.get("eager-hot-loop")
    if hot:
        rows = db.execute(
            "SELECT f.text AS file, c.line AS line, count(*) AS n FROM eager_ops e "
            "JOIN callsites c ON c.id = e.callsite_id JOIN strings f ON f.id = c.file_id "
            "WHERE e.pid = ? GROUP BY c.file_id, c.line ORDER BY n DESC", (pid,)).fetchall()
        top = rows[0]["n"] if rows else 0
        at_marker = sum(r["n"] for r in rows
                        if agtest.same_file(r["file"], sample_file) and r["line"] in hot)
        check(top > 0 and at_marker == top,
              "eager ops at the marked hot line %s:%s are the most of any line"
              % (sample_name, hot), at_marker, top)
        no_site = q1(db, "SELECT count(*) FROM eager_ops WHERE pid = ? AND callsite_id IS NULL", pid)
        check_eq(no_site, 0, "eager ops without a call site")


# ---- sample-specific checks ------------------------------------------------

def extra_variable_creation(db, oracle, pid, per_fn):
    created = sum(t["variables_created"] for t in per_fn["__call__"])
    check_eq(created, oracle["extra"]["variables_created"]["__call__"],
             "sum of traces.variables_created of __call__")
    creating = sum(1 for t in per_fn["__call__"] if t["variables_created"] > 0)
    check_eq(creating, len(oracle["functions"]["__call__"]["objects"]),
             "traces of __call__ that created a variable (one per instance)")
    # TensorFlow's own initialize_variables has no parameters, hence the signature (): not an input_signature
    init = [r[0] for r in db.execute(
        "SELECT t.has_input_signature FROM traces t JOIN functions fn ON fn.id = t.function_id "
        "JOIN strings s ON s.id = fn.name_id WHERE t.pid = ? AND s.text = 'initialize_variables'", (pid,))]
    check(init and set(init) == {0}, "traces.has_input_signature of initialize_variables (no parameters)", init, "[0...]")


def extra_jit_shapes(db, oracle, pid, per_fn):
    check_eq({t["jit_compile"] for t in per_fn["dense_gelu"]}, {1},
             "traces.jit_compile of dense_gelu")
    n = q1(db, "SELECT count(*) FROM graph_functions g JOIN functions fn ON fn.id = g.function_id "
           "JOIN strings s ON s.id = fn.name_id WHERE s.text = 'dense_gelu' "
           "AND g.role = 'inference' AND g.jit_compile = 1")
    check_eq(n, oracle["functions"]["dense_gelu"]["tracing_count"],
             "inference graph functions of dense_gelu with _XlaMustCompile")
    shapes = sorted({r[0] for r in db.execute(
        "SELECT i.shape FROM trace_inputs i JOIN traces t ON t.id = i.trace_id "
        "JOIN functions fn ON fn.id = t.function_id JOIN strings s ON s.id = fn.name_id "
        "WHERE s.text = 'dense_gelu' AND i.kind = 'tensor'")})
    check_eq(shapes, sorted("[%d,32]" % b for b in (1, 8, 3, 17)),
             "tensor input shapes of the dense_gelu traces")


def extra_retrace_scalar(db, oracle, pid, per_fn):
    vals = [r[0] for r in db.execute(
        "SELECT i.value FROM trace_inputs i JOIN traces t ON t.id = i.trace_id "
        "JOIN functions fn ON fn.id = t.function_id JOIN strings s ON s.id = fn.name_id "
        "WHERE s.text = 'sgd_step' AND i.kind = 'python' ORDER BY t.start_ns")]
    check_eq(len(set(vals)), oracle["functions"]["sgd_step"]["tracing_count"],
             "distinct Python values (lr) among sgd_step's trace inputs")
    # The learning rate is baked into each trace's graph as a float32 Const.
    import numpy as np
    lrs = [float(next(a["value"] for a in inputs if a["name"] == "lr"))
           for inputs in oracle["extra"]["trace_inputs"]["sgd_step"]]
    for t, lr in zip(per_fn["sgd_step"], lrs):
        consts = [r[0] for r in db.execute(
            "SELECT c.value FROM graph_constants c JOIN graph_functions g "
            "ON g.id = c.graph_function_id WHERE g.trace_id = ? AND g.role = 'inference' "
            "AND c.dtype = 'float32'", (t["id"],))]
        hit = [c for c in consts if np.float32(float(c)) == np.float32(lr)]
        check(hit, "float32 constant equal to lr=%r in the graph of sgd_step's trace %d"
              % (lr, t["object_trace_no"]), consts, "one equal to float32(%r)" % lr)


def extra_retrace_dtype(db, oracle, pid, per_fn):
    dtypes = sorted({r[0] for r in db.execute(
        "SELECT i.dtype FROM trace_inputs i JOIN traces t ON t.id = i.trace_id "
        "JOIN functions fn ON fn.id = t.function_id JOIN strings s ON s.id = fn.name_id "
        "WHERE s.text = 'normalize' AND i.kind = 'tensor'")})
    check_eq(dtypes, ["float32", "float64", "int32"], "dtypes of normalize's trace inputs")


def extra_retrace_object(db, oracle, pid, per_fn):
    kinds = [r[0] for r in db.execute(
        "SELECT i.kind || ':' || coalesce(i.value, '') FROM trace_inputs i "
        "JOIN traces t ON t.id = i.trace_id JOIN functions fn ON fn.id = t.function_id "
        "JOIN strings s ON s.id = fn.name_id WHERE s.text = 'preprocess' AND i.kind <> 'tensor'")]
    check(len(kinds) == oracle["functions"]["preprocess"]["tracing_count"]
          and all(k.startswith("object:") and "Config" in k for k in kinds),
          "non-tensor trace inputs of preprocess (one object input of type Config per trace)",
          kinds, "object:Config x %d" % oracle["functions"]["preprocess"]["tracing_count"])


def extra_new_function_object(db, oracle, pid, per_fn):
    objs = {t["function_object"] for t in per_fn["scale_and_sum"]}
    check_eq(len(objs), len(oracle["functions"]["scale_and_sum"]["objects"]),
             "distinct function_object values of scale_and_sum "
             "(objects die each iteration: ids must not be reused)")


def extra_serving_module(db, oracle, pid, per_fn):
    check_eq({t["has_input_signature"] for t in per_fn["serve"]}, {1},
             "traces.has_input_signature of serve")
    n = q1(db, "SELECT count(*) FROM graph_functions WHERE pid = ? AND role = 'loaded'", pid)
    check(n and n > 0, "graph_functions with role 'loaded' after tf.saved_model.load", n, "> 0")


def extra_pyfunc_pipeline(db, oracle, pid, per_fn):
    execs = q1(db, "SELECT count(*) FROM blackbox_execs b JOIN strings s ON s.id = b.op_type_id "
               "WHERE b.pid = ? AND s.text = 'EagerPyFunc'", pid)
    check_eq(execs, oracle["extra"]["py_function_execs"], "blackbox_execs of EagerPyFunc (py_function bodies)")
    # Every eager op of a tf.data thread ran inside a py_function run of that thread.
    outside = q1(db, "SELECT count(*) FROM eager_ops e JOIN threads t ON t.pid = e.pid AND t.tid = e.tid "
                 "WHERE e.pid = ? AND t.role = 'tf-data' AND NOT EXISTS (SELECT 1 FROM blackbox_execs b "
                 "WHERE b.pid = e.pid AND b.tid = e.tid AND e.start_ns >= b.start_ns AND e.start_ns < b.end_ns)",
                 pid)
    check_eq(outside, 0, "eager ops on tf.data threads outside a py_function run")
    inside = q1(db, "SELECT count(*) FROM eager_ops e JOIN threads t ON t.pid = e.pid AND t.tid = e.tid "
                "WHERE e.pid = ? AND t.role = 'tf-data'", pid)
    check(inside >= oracle["extra"]["eager_ops_in_body"], "eager ops inside py_function bodies", inside,
          ">= %d" % oracle["extra"]["eager_ops_in_body"])
    # The map's kernels run on tf.data threads while train_step calls are in
    # flight: none is a kernel of a call, so every sampled call of
    # train_step holds the same kernels (its graph's, whatever ran beside it).
    beside = q1(db, "SELECT count(*) FROM kernels k JOIN graph_nodes n ON n.id = k.node_id JOIN threads t "
                "ON t.pid = k.pid AND t.tid = k.tid WHERE k.pid = ? AND k.call_id IS NOT NULL "
                "AND (n.op_type = 'EagerPyFunc' OR t.role = 'tf-data')", pid)
    check_eq(beside, 0, "kernels of tf.data threads (the map's py_function) linked to a graph call")
    per_call = {r[0] for r in db.execute(
        "SELECT count(k.id) FROM function_calls c JOIN strings s ON s.id = c.name_id LEFT JOIN kernels k "
        "ON k.call_id = c.id WHERE c.pid = ? AND c.kernel_detail = 1 AND s.text LIKE '%train_step%' "
        "GROUP BY c.id", (pid,))}
    check(len(per_call) == 1 and min(per_call) > 0, "kernels of each sampled train_step call (one count)", per_call)


def extra_generator_dataset(db, oracle, pid, per_fn):
    """from_generator's three PyFunc nodes: each run resolved to its own node."""
    runs = {r[0]: r[1] for r in db.execute(
        "SELECT s.text, count(*) FROM blackbox_execs b JOIN blackbox_nodes n ON n.id = b.blackbox_node_id "
        "JOIN graph_functions g ON g.id = n.graph_function_id JOIN strings s ON s.id = g.name_id "
        "WHERE b.pid = ? GROUP BY s.text", (pid,))}
    by_fn = {}
    for name, n in runs.items():
        for key in ("generator_next_fn", "get_iterator_id_fn", "finalize_fn"):
            if "from_generator_" + key in name:
                by_fn[key] = by_fn.get(key, 0) + n
    extra = oracle["extra"]
    check_eq(by_fn, {"generator_next_fn": extra["next_calls"], "get_iterator_id_fn": extra["iterator_inits"],
                     "finalize_fn": extra["iterator_inits"]}, "black-box runs per from_generator node")
    check_eq(q1(db, "SELECT count(*) FROM blackbox_execs WHERE pid = ? AND blackbox_node_id IS NULL", pid), 0,
             "black-box runs not resolved to a node")


def extra_input_bound(db, oracle, pid, per_fn):
    reads = q1(db, "SELECT count(*) FROM eager_ops e JOIN strings s ON s.id = e.op_id "
               "WHERE e.pid = ? AND s.text = 'IteratorGetNext'", pid)
    check_eq(reads, oracle["extra"]["steps"] + 1, "IteratorGetNext ops (steps + the read that ends the loop)")


def extra_py_function_step(db, oracle, pid, per_fn):
    rows = db.execute(
        "SELECT b.op_type, g.function_id, s.text AS fname FROM blackbox_nodes b "
        "JOIN graph_functions g ON g.id = b.graph_function_id "
        "LEFT JOIN functions fn ON fn.id = g.function_id "
        "LEFT JOIN strings s ON s.id = fn.name_id WHERE g.pid = ?", (pid,)).fetchall()
    types = collections.Counter(r["op_type"] for r in rows)
    check(types.get("EagerPyFunc", 0) >= 1, "EagerPyFunc nodes (tf.py_function)",
          dict(types), ">= 1 EagerPyFunc")
    check(types.get("PyFunc", 0) + types.get("PyFuncStateless", 0) >= 1,
          "PyFunc nodes (tf.numpy_function in tf.data)", dict(types), ">= 1 PyFunc")
    in_step = [r for r in rows if r["op_type"] == "EagerPyFunc" and r["fname"] == "train_step"]
    check(len(in_step) >= 1, "an EagerPyFunc node in a graph of train_step",
          [(r["op_type"], r["fname"]) for r in rows], "EagerPyFunc in train_step")
    execs = {r[0]: r[1] for r in db.execute(
        "SELECT s.text, count(*) FROM blackbox_execs b JOIN strings s ON s.id = b.op_type_id "
        "WHERE b.pid = ? GROUP BY s.text", (pid,))}
    check_eq(execs.get("EagerPyFunc", 0), oracle["extra"]["py_function_execs"],
             "blackbox_execs of EagerPyFunc (log_loss calls)")
    check_eq(execs.get("PyFunc", 0) + execs.get("PyFuncStateless", 0),
             oracle["extra"]["numpy_function_execs"],
             "blackbox_execs of PyFunc (jitter calls in tf.data)")
    roles = {r[0] for r in db.execute(
        "SELECT coalesce(t.role, 'no threads row') FROM blackbox_execs b "
        "JOIN strings s ON s.id = b.op_type_id LEFT JOIN threads t "
        "ON t.pid = b.pid AND t.tid = b.tid WHERE b.pid = ? AND s.text = 'PyFunc'", (pid,))}
    check_eq(roles, {"tf-data"}, "thread role of the threads running the tf.data map's PyFunc")


def extra_eager_heavy(db, oracle, pid, per_fn):
    roles = {r[0]: r[1] for r in db.execute(
        "SELECT t.role, count(*) FROM eager_ops e LEFT JOIN threads t "
        "ON t.pid = e.pid AND t.tid = e.tid WHERE e.pid = ? GROUP BY t.role", (pid,))}
    check_eq(roles, {"python-main": oracle["eager_ops"]},
             "eager ops by thread role (all on the main Python thread)")
    funcs = {r[0]: r[1] for r in db.execute(
        "SELECT f.text, count(*) FROM eager_ops e JOIN callsites c ON c.id = e.callsite_id "
        "JOIN strings f ON f.id = c.func_id WHERE e.pid = ? GROUP BY f.text", (pid,))}
    check_eq(funcs.get("step", 0), oracle["extra"]["planned_eager_ops"],
             "eager ops whose call site is in function step")
    # The loop does nothing but dispatch: on its one thread, the dispatch
    # spans plus the Python before each (python_ns) are disjoint, so they
    # cannot exceed the loop's wall time, and must cover nearly all of it.
    t0, t1 = oracle["extra"]["loop_window_ns"]
    n, cost, lo, hi = db.execute(
        "SELECT count(*), sum(end_ns - start_ns + python_ns), min(start_ns), max(end_ns) "
        "FROM eager_ops WHERE pid = ? AND start_ns BETWEEN ? AND ?", (pid, t0, t1)).fetchone()
    check_eq(n, oracle["extra"]["planned_eager_ops"], "eager ops inside the loop's window")
    loop = t1 - t0
    # The first op's python_ns reaches back before the window (the Python
    # between the previous dispatch and the loop): allow exactly that.  The
    # lower bound is loose on purpose: a gap over 1 ms (the thread preempted
    # on a busy machine) is not counted, and this is no timing test.
    first_gap = db.execute(
        "SELECT python_ns FROM eager_ops WHERE pid = ? AND start_ns BETWEEN ? AND ? "
        "ORDER BY start_ns LIMIT 1", (pid, t0, t1)).fetchone()[0]
    check(cost is not None and 0.5 * loop <= cost <= loop + first_gap,
          "eager cost (dispatch + python_ns) of the loop's ops vs. the loop's wall time",
          cost, "between 50%% of %d ns and that plus the first op's python_ns (%d)" % (loop, first_gap))


def extra_keras_fit(db, oracle, pid, per_fn):
    created = sum(t["variables_created"] for t in per_fn.get("one_step_on_data", []))
    check(created > 0, "variables created while tracing one_step_on_data "
          "(optimizer and metric state)", created, "> 0")


def extra_tape_forward(db, oracle, pid, per_fn):
    roles = {r[0]: r[1] for r in db.execute(
        "SELECT g.role, count(*) FROM function_calls c JOIN graph_functions g "
        "ON g.id = c.graph_function_id JOIN functions fn ON fn.id = g.function_id "
        "JOIN strings s ON s.id = fn.name_id WHERE s.text = 'forward' GROUP BY g.role")}
    check_eq(roles.get("forward", 0), oracle["extra"]["calls_under_tape"],
             "calls of forward's forward function (under the eager tape)")
    check_eq(roles.get("inference", 0), oracle["extra"]["calls_without_tape"],
             "calls of forward's inference function (no tape)")
    check_eq(roles.get("backward", 0), oracle["extra"]["calls_under_tape"],
             "calls of forward's backward function (tape.gradient)")


def check_branches(db, pid, owner):
    """cond/while bodies: role branch, owned by the user function whose graph
    uses them, with a parent graph function."""
    rows = db.execute(
        "SELECT gs.text AS name, g.parent_id, s.text AS fname FROM graph_functions g "
        "JOIN strings gs ON gs.id = g.name_id LEFT JOIN functions fn ON fn.id = g.function_id "
        "LEFT JOIN strings s ON s.id = fn.name_id WHERE g.pid = ? AND g.role = 'branch'",
        (pid,)).fetchall()
    check(len(rows) > 0, "branch graph functions recorded", len(rows), "> 0")
    bad = [(r["name"], r["fname"], r["parent_id"]) for r in rows
           if r["fname"] not in owner or r["parent_id"] is None]
    check_eq(bad, [], "branch graph functions without owner in %s or without parent"
             % sorted(owner))


def extra_collatz(db, oracle, pid, per_fn):
    check_branches(db, pid, {"collatz"})


def extra_list_append(db, oracle, pid, per_fn):
    check_branches(db, pid, {"squares_buggy", "squares_fixed", "parts_step"})
    # The buggy loop's body: the list append ran once at trace time, so the
    # while body of squares_buggy holds no accumulator; squares_fixed's
    # graph has TensorArray ops.
    n = q1(db, "SELECT count(*) FROM graph_functions g JOIN functions fn ON fn.id = g.function_id "
           "JOIN strings s ON s.id = fn.name_id WHERE s.text = 'squares_fixed' AND g.role = 'branch'")
    check(n and n >= 1, "branch (while body/cond) graph functions of squares_fixed", n, ">= 1")


def extra_tf1_session(db, oracle, pid, per_fn):
    """Session steps per marked line == the program's own counters, with the
    feeds, fetches and targets it passed; then the report shows them."""
    marks = agtest.marker_lines("tf1_session.py")
    sample_file = agtest.sample("tf1_session.py")
    got = {}
    for r in db.execute(
            "SELECT f.text AS file, c.line AS line, s.kind, count(*) AS runs, min(s.feeds) AS feeds,"
            " max(s.feeds) AS feeds_max, min(s.fetches) AS fetches, max(s.fetches) AS fetches_max,"
            " min(s.targets) AS targets, max(s.targets) AS targets_max, min(s.ok) AS ok,"
            " min(s.end_ns - s.start_ns) AS shortest FROM session_runs s"
            " LEFT JOIN callsites c ON c.id = s.callsite_id LEFT JOIN strings f ON f.id = c.file_id"
            " WHERE s.pid = ? GROUP BY s.callsite_id", (pid,)):
        label = [m for m, lines in marks.items()
                 if agtest.same_file(r["file"], sample_file) and r["line"] in lines]
        key = label[0] if label else "%s:%s" % (r["file"], r["line"])
        check_eq((r["feeds"], r["fetches"], r["targets"], r["ok"], r["kind"]),
                 (r["feeds_max"], r["fetches_max"], r["targets_max"], 1, "run"),
                 "session_runs at %s: same counts every run, ok, kind run" % key)
        check(r["shortest"] > 0, "session_runs at %s last > 0 ns" % key, r["shortest"], "> 0")
        got[key] = {"runs": r["runs"], "feeds": r["feeds"], "fetches": r["fetches"], "targets": r["targets"]}
    check_eq(got, oracle["extra"]["session_runs"],
             "Session steps per marked line (the program's own counters)")
    total = sum(v["runs"] for v in oracle["extra"]["session_runs"].values())
    rc, out, err = agtest.agprof_cmd("report", "--format", "json", agtest.last_recording)
    check_eq(rc, 0, "agprof report --format json exit status")
    rep = json.loads(out) if rc == 0 else {"sessions": [], "session": {}}
    check_eq(rep["session"].get("session_runs"), total, "JSON session.session_runs")
    js = {}
    for s in rep["sessions"]:
        loc = s["location"] or {}
        label = [m for m, lines in marks.items()
                 if agtest.same_file(loc.get("file"), sample_file) and loc.get("line") in lines]
        js[label[0] if label else str(loc)] = s["runs"]
        check(s["time_ns"] > 0, "JSON sessions[].time_ns > 0", s["time_ns"], "> 0")
    check_eq(js, {k: v["runs"] for k, v in oracle["extra"]["session_runs"].items()},
             "JSON sessions: runs per location")
    rc, out, err = agtest.agprof_cmd("report", agtest.last_recording)
    check_eq(rc, 0, "agprof report exit status")
    train = marks["session-train"][0]
    check("Session runs by source line" in out, "report text has the Session section", out[-600:])
    row = [l for l in out.splitlines() if "tf1_session.py:%d " % train in l]
    check(len(row) == 1 and re.search(r"\b%d\b" % oracle["extra"]["session_runs"]["session-train"]["runs"],
                                      row[0] if row else ""),
          "report row of the train line shows its runs", row, "tf1_session.py:%d ... runs" % train)


EXTRA = {
    "tf1_session.py": extra_tf1_session,
    "variable_creation.py": extra_variable_creation,
    "jit_shapes.py": extra_jit_shapes,
    "retrace_scalar.py": extra_retrace_scalar,
    "retrace_dtype.py": extra_retrace_dtype,
    "retrace_object.py": extra_retrace_object,
    "new_function_object.py": extra_new_function_object,
    "serving_module.py": extra_serving_module,
    "pyfunc_pipeline.py": extra_pyfunc_pipeline,
    "generator_dataset.py": extra_generator_dataset,
    "input_bound.py": extra_input_bound,
    "py_function_step.py": extra_py_function_step,
    "keras_fit.py": extra_keras_fit,
    "eager_heavy.py": extra_eager_heavy,
    "tape_forward.py": extra_tape_forward,
    "list_append.py": extra_list_append,
    "collatz.py": extra_collatz,
}


def main():
    agtest.need_agprof()
    sample_name = sys.argv[1]
    proc, db, oracle = agtest.run_sample_recorded(sample_name, sys.argv[2:])
    check_eq(proc.returncode, 0, "agprof run exit status")
    agtest.check_recording_header(db)
    m = agtest.meta(db)
    check_eq(m.get("exit_status"), "0", "meta exit_status")
    check_eq(m.get("tf_status"), "hooked", "meta tf_status")
    check_eq(m.get("dropped_events"), "0", "meta dropped_events (exact counts need 0)")
    pid = oracle["pid"]
    row = db.execute("SELECT * FROM processes WHERE pid = ?", (pid,)).fetchone()
    if not check(row is not None, "processes row of the sample's pid %d" % pid):
        agtest.finish(sample_name)
    check_eq(row["tf_status"], "hooked", "processes.tf_status of the sample")
    check_eq(row["exit_status"], 0, "processes.exit_status of the sample")
    check_eq(row["dropped_events"], 0, "processes.dropped_events of the sample")

    check_eq(json.loads(m.get("argv", "null")), [agtest.PYTHON, agtest.sample(sample_name)]
             + sys.argv[2:], "meta argv")
    check(agtest.same_file(m.get("cwd"), agtest.SOURCE_ROOT), "meta cwd", m.get("cwd"),
          agtest.SOURCE_ROOT)
    start, end = int(m.get("start_ns", 0)), int(m.get("end_ns", 0))
    for table in ("eager_ops", "function_calls", "traces", "blackbox_execs"):
        lo, hi = db.execute("SELECT min(start_ns), max(end_ns) FROM %s WHERE pid = ?" % table,
                            (pid,)).fetchone()
        if lo is not None:
            check(start <= lo and hi <= end and row["start_ns"] <= lo and hi <= row["end_ns"],
                  "%s times inside the session and the process" % table,
                  [lo, hi], "within meta [%d, %d] and process [%d, %d]"
                  % (start, end, row["start_ns"], row["end_ns"]))
    bad = q1(db, "SELECT count(*) FROM eager_ops WHERE end_ns < start_ns") + \
        q1(db, "SELECT count(*) FROM function_calls WHERE end_ns < start_ns") + \
        q1(db, "SELECT count(*) FROM traces WHERE end_ns < start_ns")
    check_eq(bad, 0, "events ending before they start")
    failed_calls = q1(db, "SELECT count(*) FROM function_calls WHERE pid = ? AND ok = 0", pid)
    check_eq(failed_calls, 0, "graph-function calls with ok = 0")

    # Code facts of the files the recording names only: the parser's argv once ran on past its last file into
    # a freed '--library' marker, whose bytes became an 'error' fact's path (invalid UTF-8 in CSV exports).
    named = {r[0] for r in db.execute("SELECT path FROM source_files")} | {
        r[0] for r in db.execute("SELECT s.text FROM callsites c JOIN strings s ON s.id = c.file_id")}
    stray = [r[0] for r in db.execute("SELECT DISTINCT path FROM code_facts") if r[0] not in named]
    check_eq(stray, [], "code_facts only of files the recording names")

    per_fn = compare_functions(db, oracle, pid, sample_name)
    compare_window(db, oracle, pid)
    compare_trace_names(db, oracle, per_fn)
    compare_trace_inputs(db, oracle, per_fn)
    compare_callsites(db, oracle, pid, sample_name, per_fn)
    if sample_name in EXTRA:
        EXTRA[sample_name](db, oracle, pid, per_fn)
    agtest.finish(sample_name)


if __name__ == "__main__":
    main()
