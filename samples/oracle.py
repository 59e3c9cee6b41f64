"""Independent ground truth for the agprof integration tests.

Every sample imports this module.  When the environment variable
AGPROF_ORACLE names a file, the sample writes there, at exit, a JSON object
that says what really happened, measured WITHOUT agprof:

    {
      "sample":    "collatz.py",
      "pid":       1234,                      # process that wrote the oracle
      "functions": {
        "<python function name>": {
          "tracing_count": f.experimental_get_tracing_count(),
          "calls":         <Python-side count of calls of the tf.function>,
          "file": "...", "line": <co_firstlineno>,
          "objects": [tracing count per tf.function object]  # optional
        }
      },
      "eager_ops":         <count from TensorFlow's own profiler, or null>,
      "eager_ops_by_type": {"AddV2": 25000, ...} or null,
      "eager_func_calls":  <graph-function executions seen by the profiler, or null>,
      "eager_window_ns":   [t0, t1] or null,  # CLOCK_MONOTONIC, see below
      "extra":             {...}              # sample-specific facts
    }

Without AGPROF_ORACLE every helper here is a cheap no-op (apart from the call
counters), so the samples run standalone, and without agprof.

How the eager op count is obtained
----------------------------------
`eager_window()` wraps the measured part of a sample in
tf.profiler.experimental.start()/stop() and parses the XSpace protocol buffer
(`*.xplane.pb`) the profiler writes (proto: tensorflow.tsl.profiler.protobuf.
xplane_pb2, shipped with TF 2.21).  On the "/host:CPU" plane, TensorFlow's
eager runtime emits, for every TFE_Execute, exactly one TraceMe event named
"EagerExecute" (core/common_runtime/eager/execute.cc: EagerExecute()), with
two stats:
  - "eager_op": the op type ("AddV2", "_EagerConst", ...) or, for a graph
    function, its name ("__inference_f_110");
  - "is_func":  1 when the executed op is a registered graph function.
We count EagerExecute events with is_func == 0 as eager (primitive) ops, and
those with is_func == 1 as graph-function calls.  Other events on that plane
are NOT one-per-op: "TFE_Py_FastPathExecute_C" misses ops run through the
slow path or the C API (e.g. the "_EagerConst" copies made by tf.constant),
"EagerLocalExecute: <op>" is nested in EagerExecute (and absent for remote or
failed ops), "EagerCopyToDevice"/"EagerKernelExecute" are per input/kernel.
An EagerExecute nested in a "TFE_Py_FastPathExecute_C" event (same thread,
time containment) was dispatched by the C fast path, except "_EagerConst",
which the fast path's argument conversion runs through TFE_Execute directly
(eager_fast_path_by_type; agprof's eager_ops.slow_path = 0).
Ops executed inside graph functions appear as "<node>:<OpType>" events on the
tf_Compute lines and are not eager ops.  An EagerExecute inside an
"agprof op prices" event (same thread, time containment) is agprof's: the
collector times a few hundred ops of its own at a process's first trace, with
its hooks standing aside, so they are not counted.

The window's bounds are also written as CLOCK_MONOTONIC nanoseconds
(time.monotonic_ns(), the clock agprof records with), taken right after
start() and right before stop(), so that a test can count the recorded eager
ops whose start_ns lies in the same window.
"""

import atexit
import bisect
import collections
import glob
import inspect
import json
import os
import shutil
import sys
import tempfile
import time

ORACLE_PATH = os.environ.get("AGPROF_ORACLE")
ENABLED = bool(ORACLE_PATH)
# AGPROF_ORACLE_NO_PROFILER=1: write the oracle but do not run the profiler
# (eager_* stay null): for runs too long to profile (tests/integration/
# test_volume.py), where the sample's own planned counts are the truth.
PROFILE = ENABLED and not os.environ.get("AGPROF_ORACLE_NO_PROFILER")
_main_pid = os.getpid()

_calls = collections.Counter()
_functions = {}          # name -> list of tf.function objects
_snapshots = {}          # name -> tracing counts of objects no longer held
_where_of = {}           # name -> (file, line) for snapshotted functions
_state = {
    "eager_ops": None,
    "eager_ops_by_type": None,
    "eager_func_calls": None,
    "eager_func_calls_by_name": None,
    "eager_window_ns": None,
    "eager_fast_path_by_type": None,
    "extra": {},
}


def called(name, n=1):
    """Count one Python-side call of the tf.function registered as `name`."""
    _calls[name] += n


def track(name, *tf_functions):
    """Register tf.function object(s) whose tracing count goes into the oracle.

    Several objects may wrap the same Python function (new_function_object.py);
    their counts are summed in "tracing_count" and listed in "objects".
    """
    _functions.setdefault(name, []).extend(tf_functions)


def snapshot(name, tf_function):
    """Record the tracing count of a tf.function object now, as one more object.

    For objects the sample lets die (new_function_object.py): holding them in
    the oracle would change the program (their graphs would never be freed
    and their ids never reused).
    """
    _snapshots.setdefault(name, []).append(_tracing_count(tf_function))
    if name not in _where_of:
        _where_of[name] = _where(tf_function)


def executed_kernels(concrete):
    """Kernels TensorFlow's executor runs per call of a concrete function,
    from its own FunctionDef: every node except Const (the executor hands a
    constant's tensor over without running its kernel: OpKernel::const_tensor,
    ExecutorImpl) and Identity (grappler's dependency optimizer prunes the
    Identity nodes between an op and the function's outputs when it
    instantiates the function), plus one _Arg kernel per input and one
    _Retval per output of the function's signature.  The samples using this
    have no other node grappler would fold or prune."""
    fdef = concrete.function_def
    nodes = [n for n in fdef.node_def if n.op not in ("Const", "Identity")]
    return {"nodes": len(fdef.node_def), "kernels": len(nodes) + len(fdef.signature.input_arg)
            + len(fdef.signature.output_arg), "name": fdef.signature.name}


def _flatten(name, value, out):
    """Flatten one argument like the trace_inputs table: lists/tuples as
    name[i], dicts as name['k'] (sorted keys, as tf.nest orders them)."""
    import tensorflow as tf
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _flatten("%s[%d]" % (name, i), v, out)
    elif isinstance(value, dict):
        for k in sorted(value):
            _flatten("%s[%r]" % (name, k), value[k], out)
    elif isinstance(value, tf.Variable):
        out.append({"name": name, "kind": "variable", "dtype": value.dtype.name,
                    "shape": _shape(value.shape), "value": None})
    elif isinstance(value, tf.Tensor):
        out.append({"name": name, "kind": "tensor", "dtype": value.dtype.name,
                    "shape": _shape(value.shape), "value": None})
    elif value is None:
        out.append({"name": name, "kind": "none", "dtype": None, "shape": None,
                    "value": None})
    elif isinstance(value, (bool, int, float, str)):
        out.append({"name": name, "kind": "python", "dtype": None, "shape": None,
                    "value": repr(value)[:200]})
    else:
        out.append({"name": name, "kind": "object", "dtype": None, "shape": None,
                    "value": type(value).__name__})


def _shape(shape):
    if shape.rank is None:
        return "?"
    return "[" + ",".join("None" if d is None else str(d) for d in shape.as_list()) + "]"


def traced_with(name, **arguments):
    """Record the concrete inputs of a call that just added a trace to `name`.

    Pass every parameter of the traced function by name, in order, defaults
    included (TF binds them into the signature): oracle "trace_inputs".
    """
    if not ENABLED:
        return
    flat = []
    for arg, value in arguments.items():
        _flatten(arg, value, flat)
    _state["extra"].setdefault("trace_inputs", {}).setdefault(name, []).append(flat)


def extra(key, value):
    """Record a sample-specific fact in the oracle's "extra" object."""
    _state["extra"][key] = value


def _tracing_count(f):
    return int(f.experimental_get_tracing_count())


def _where(f):
    py = getattr(f, "python_function", None)
    try:
        py = inspect.unwrap(py)   # methods: TF wraps the def in a bound wrapper
    except (TypeError, ValueError):
        pass
    py = getattr(py, "__func__", py)
    code = getattr(py, "__code__", None)
    if code is None:
        return None, None
    return os.path.abspath(code.co_filename), code.co_firstlineno


# The profiler region holding the ops agprof's collector times at a process's first trace
# (collector/pytrace.py measure_prices()): agprof's, not the program's, and not recorded.
AGPROF_PRICES = "agprof op prices"


def parse_xspace(path):
    """Return (eager ops by type, graph-function calls by name, eager ops
    dispatched by the C fast path by type) from an XSpace file."""
    try:
        from tensorflow.tsl.profiler.protobuf import xplane_pb2
    except ImportError:  # older layouts
        from tsl.profiler.protobuf import xplane_pb2
    space = xplane_pb2.XSpace()
    with open(path, "rb") as fh:
        space.ParseFromString(fh.read())
    ops = collections.Counter()
    funcs = collections.Counter()
    fast = collections.Counter()
    for plane in space.planes:
        if not plane.name.startswith("/host:"):
            continue
        md = plane.event_metadata
        sm = plane.stat_metadata
        execute_ids = {k for k, v in md.items() if v.name == "EagerExecute"}
        fastpath_ids = {k for k, v in md.items() if v.name == "TFE_Py_FastPathExecute_C"}
        prices_ids = {k for k, v in md.items() if v.name == AGPROF_PRICES}
        if not execute_ids:
            continue
        for line in plane.lines:
            spans = sorted((ev.offset_ps, ev.offset_ps + ev.duration_ps)
                           for ev in line.events if ev.metadata_id in fastpath_ids)
            starts = [a for a, _ in spans]
            agprofs = [(ev.offset_ps, ev.offset_ps + ev.duration_ps)
                       for ev in line.events if ev.metadata_id in prices_ids]
            for ev in line.events:
                if ev.metadata_id not in execute_ids:
                    continue
                if any(a <= ev.offset_ps and ev.offset_ps + ev.duration_ps <= b for a, b in agprofs):
                    continue  # agprof's own ops, which it does not record
                op = None
                is_func = 0
                for st in ev.stats:
                    sname = sm[st.metadata_id].name
                    kind = st.WhichOneof("value")
                    if sname == "eager_op":
                        if kind == "ref_value":
                            op = sm[st.ref_value].name
                        elif kind == "str_value":
                            op = st.str_value
                    elif sname == "is_func":
                        is_func = int(getattr(st, kind))
                if op is None:
                    op = "?"
                if is_func:
                    funcs[op] += 1
                    continue
                ops[op] += 1
                # Inside a TFE_Py_FastPathExecute_C span: the op the fast path
                # was asked for.  The exception is _EagerConst: the fast path
                # converting a Python value argument to a tensor
                # (ConvertToEagerTensor) calls TFE_Execute directly for it.
                i = bisect.bisect_right(starts, ev.offset_ps) - 1
                if (op != "_EagerConst" and i >= 0
                        and ev.offset_ps + ev.duration_ps <= spans[i][1]):
                    fast[op] += 1
    return ops, funcs, fast


class eager_window:
    """Context manager: count eager ops of the enclosed code with TF's profiler.

    Does nothing unless AGPROF_ORACLE is set.  Only one window per process
    at a time.  The window of the process that imported this module goes into
    the oracle; in a forked child, read the counts from the object
    (eager_ops, eager_ops_by_type, window_ns) and hand them to the parent.
    """

    eager_ops = None
    eager_ops_by_type = None
    window_ns = None

    def __enter__(self):
        self._on = PROFILE
        if not self._on:
            return self
        import tensorflow as tf
        self._tf = tf
        self._dir = tempfile.mkdtemp(prefix="agprof-oracle-")
        tf.profiler.experimental.start(self._dir)
        self._t0 = time.monotonic_ns()
        return self

    def __exit__(self, *exc):
        if not self._on:
            return False
        t1 = time.monotonic_ns()
        self._tf.profiler.experimental.stop()
        try:
            files = glob.glob(os.path.join(self._dir, "**", "*.xplane.pb"),
                              recursive=True)
            if len(files) != 1:
                raise RuntimeError("oracle: expected one xplane.pb, found %r" % files)
            ops, funcs, fast = parse_xspace(files[0])
        finally:
            shutil.rmtree(self._dir, ignore_errors=True)
        self.eager_ops = sum(ops.values())
        self.eager_ops_by_type = dict(sorted(ops.items()))
        self.window_ns = [self._t0, t1]
        if os.getpid() == _main_pid:
            _state["eager_ops"] = self.eager_ops
            _state["eager_ops_by_type"] = self.eager_ops_by_type
            _state["eager_func_calls"] = sum(funcs.values())
            _state["eager_func_calls_by_name"] = dict(sorted(funcs.items()))
            _state["eager_window_ns"] = self.window_ns
            _state["eager_fast_path_by_type"] = dict(sorted(fast.items()))
        return False


def write():
    """Write the oracle file now (also done automatically at exit)."""
    if not ENABLED:
        return
    functions = {}
    for name, objs in _functions.items():
        counts = [_tracing_count(f) for f in objs]
        file, line = _where(objs[0])
        entry = {
            "tracing_count": sum(counts),
            "calls": _calls.get(name, 0),
            "file": file,
            "line": line,
        }
        if len(objs) > 1:
            entry["objects"] = counts
        functions[name] = entry
    for name, counts in _snapshots.items():
        entry = functions.setdefault(name, {
            "tracing_count": 0, "calls": _calls.get(name, 0),
            "file": _where_of[name][0], "line": _where_of[name][1],
            "objects": []})
        entry.setdefault("objects", [])
        entry["objects"] = entry["objects"] + counts
        entry["tracing_count"] += sum(counts)
    for name in _calls:
        if name not in functions:
            functions[name] = {"tracing_count": None, "calls": _calls[name]}
    doc = {
        "sample": os.path.basename(sys.argv[0]) if sys.argv else "",
        "pid": os.getpid(),
        "functions": functions,
    }
    doc.update(_state)
    tmp = ORACLE_PATH + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(doc, fh, indent=1, sort_keys=True)
        fh.write("\n")
    os.replace(tmp, ORACLE_PATH)


def _at_exit():
    # A forked child (multiprocessing) inherits the atexit handler: only the
    # process that imported this module writes the oracle.
    if os.getpid() == _main_pid:
        write()


atexit.register(_at_exit)
