"""Diagnoses on real third-party code: Keras's model.fit beside the user's own
tf.data pipeline (samples/keras_pipeline.py).

model.fit builds pipelines of its own at the user's fit line (its data
adapter: range, map(permutation), flat_map, zip, map(grab_batch)) and reads
them inside its train graph (multi_step_on_iterator's IteratorGetNext); for
validation_split it traces some of their functions again without a dataset
op the collector sees.  The user's loop then reads its own pipeline.
Recorded with real TensorFlow and Keras, and checked in the report's JSON:
- the main thread's input row describes the user's pipeline only: it
  starts at the user's from_tensor_slices, at the marked line, and holds
  none of Keras's transformations (they were built at the fit line, which
  the in-graph reader's calls come from);
- its map is named after the user's function (`map(augment)`), not after
  the function Keras traced last (`permutation`);
- Keras traces one_step_on_data inside multi_step_on_iterator's trace: the
  session's tracing time counts that time once (per thread, the union of
  its traces' spans, computed here from the traces table), less than the
  plain sum of the traces.
And samples/closure_step.py (GPflow's minibatch loop without GPflow): a
tf.function without parameters reading its iterator in the graph, traced
twice because its first call created the optimizer's variables: one graph
reader, whose calls are the program's own step count (the first trace's
graph never ran), and no input_signature said of the function.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq  # noqa: E402

SAMPLE = "keras_pipeline.py"


def check_tracing_time(rec, doc):
    db = agtest.open_recording(rec)
    spans = sorted(tuple(r) for r in db.execute("SELECT pid, tid, start_ns, end_ns FROM traces WHERE end_ns > start_ns"))
    union, end, thread = 0, None, None
    for pid, tid, start, stop in spans:
        if (pid, tid) != thread:
            thread, end = (pid, tid), None
        start = max(start, end) if end is not None else start
        union += max(0, stop - start)
        end = stop if end is None else max(end, stop)
    total = sum(s[3] - s[2] for s in spans)
    check(union < total, "nested traces in the recording (union %d < sum %d)" % (union, total))
    check_eq(doc.get("session", {}).get("trace_ns"), union, "session trace_ns = per-thread union of the traces")


def main_pipeline(rec):
    rc, text, err = agtest.agprof_cmd("report", "--format", "json", rec)
    check_eq(rc, 0, "agprof report --format json exit status (%s)" % err.strip())
    rows = [r for r in json.loads(text).get("input", []) if r.get("thread") in ("main", "python-main")] if rc == 0 else []
    return rows[0]["pipeline"] if len(rows) == 1 else None


def check_source_inputs(rec, line):
    """A source dataset's inputs are tensors, not a dataset: the collector keeps no input for it (their
    addresses may be those of freed datasets: the CI run of stop 42 chained Keras fit's from_tensors in front
    of the user's from_tensor_slices, once in five runs); and a recording whose from_tensor_slices input is
    an earlier dataset's output (as the collectors before stop 43 could write) still starts at the user's line."""
    db = agtest.open_recording(rec)
    rows = db.execute("SELECT s.text, d.input FROM dataset_ops d JOIN strings s ON s.id = d.op_id"
                      " WHERE s.text IN ('TensorSliceDataset', 'TensorDataset', 'RangeDataset', 'MapDataset')").fetchall()
    check_eq(sorted({(op, inp is not None) for op, inp in rows}),
             [("MapDataset", True), ("RangeDataset", False), ("TensorDataset", False), ("TensorSliceDataset", False)],
             "dataset ops with an input handle (only those over a dataset)")
    copy = agtest.agtestlib.edited_copy(rec, os.path.join(agtest.tmpdir(), "reused_address.agprof"), lambda db: db.execute(
        "UPDATE dataset_ops SET input = (SELECT d.output FROM dataset_ops d JOIN strings s ON s.id = d.op_id"
        " WHERE s.text = 'TensorDataset' ORDER BY d.start_ns DESC LIMIT 1)"
        " WHERE op_id = (SELECT id FROM strings WHERE text = 'TensorSliceDataset')"))
    pipeline = main_pipeline(copy)
    check(pipeline and pipeline.startswith("from_tensor_slices at line %d" % line),
          "the pipeline starts at the user's line when its source's input address was a freed dataset's", pipeline)


def check_no_input_slow_op(rec):
    """Keras's train function reads its iterator in the graph: that wait is input's, never a slow op,
    even with slow-op's thresholds at 0 (every other op type of the function is then a finding)."""
    rc, text, err = agtest.agprof_cmd("report", "--format", "json", "--set", "slow-op.min_share=0",
                                      "--set", "slow-op.min_time=0", rec)
    check_eq(rc, 0, "report --set slow-op... exit status (%s)" % err.strip())
    slow = [f["message"].split(" took ")[0] for f in json.loads(text)["findings"] if f["rule"] == "slow-op"] if rc == 0 else []
    check(slow, "slow-op at thresholds 0 reports the train function's op types", slow)
    check([t for t in slow if t.startswith(("IteratorGetNext", "OptionalGetValue"))] == [],
          "no iterator read is a slow op", slow)


def check_budget_reader():
    """Keras's fit over 512 steps past a small budget: its train function reads the iterator in the graph,
    most of its calls are aggregated, and the report still counts every step (the program's own counter)."""
    out = os.path.join(agtest.tmpdir(), "keras_steps.agprof")
    proc = agtest.run_agprof(out, [agtest.PYTHON, agtest.sample("keras_steps.py")], agprof_args=["--max-events", "200"])
    check_eq(proc.returncode, 0, "agprof run --max-events 200 exit status")
    m = re.search(rb"steps (\d+)", proc.stdout)
    steps = int(m.group(1)) if m else -1
    check_eq(steps, 512, "the program's own step count")
    rc, text, err = agtest.agprof_cmd("report", "--format", "json", out)
    doc = json.loads(text) if rc == 0 else {}
    budget = doc.get("session", {}).get("budget") or {}
    check(budget.get("aggregated_calls", 0) > steps // 2, "most graph calls aggregated past the budget", budget)
    readers = doc.get("graph_readers", [])
    check_eq([r["calls"] for r in readers], [steps], "the in-graph reader's calls = the program's steps")
    fn = [f for f in doc.get("functions", []) if f["name"] == "multi_step_on_iterator"]
    check_eq([f["calls"] for f in fn], [steps], "the train function's calls = the program's steps")
    rc, text, err = agtest.agprof_cmd("report", out)
    table = text.split("Traced functions", 1)[-1]
    check(re.search(r"^    (Keras )?multi_step_on_iterator$", table, re.M), "a name the table's cell cuts is also shown whole",
          table[:600])


def check_closure_step():
    out = os.path.join(agtest.tmpdir(), "closure_step.agprof")
    proc = agtest.run_agprof(out, [agtest.PYTHON, agtest.sample("closure_step.py")])
    check_eq(proc.returncode, 0, "closure_step.py under agprof run: exit status")
    m = re.search(rb"steps (\d+) .* tracing count (\d+)", proc.stdout)
    steps, traces = (int(m.group(1)), int(m.group(2))) if m else (-1, -1)
    rc, text, err = agtest.agprof_cmd("report", "--format", "json", out)
    doc = json.loads(text) if rc == 0 else {}
    check_eq([(r["function"], r["calls"]) for r in doc.get("graph_readers", [])], [("step", steps)],
             "closure_step: one in-graph reader, called once per step (the program's count)")
    fn = [f for f in doc.get("functions", []) if f["name"] == "step"]
    check_eq([(f["calls"], len(f["retraces"]) + 1, f["has_input_signature"]) for f in fn], [(steps, traces, False)],
             "closure_step: step's calls, traces (TensorFlow's count) and no input_signature")


def main():
    agtest.need_agprof()
    out = os.path.join(agtest.tmpdir(), "keras_pipeline.agprof")
    proc = agtest.run_agprof(out, [agtest.PYTHON, agtest.sample(SAMPLE)])
    check_eq(proc.returncode, 0, "agprof run exit status (%s)" % proc.stderr.decode("utf-8", "replace")[-500:])
    line = agtest.marker_lines(SAMPLE)["user-pipeline"][0]
    rc, text, err = agtest.agprof_cmd("report", "--format", "json", out)
    check_eq(rc, 0, "agprof report --format json exit status (%s)" % err.strip())
    doc = json.loads(text) if rc == 0 else {}
    rows = [r for r in doc.get("input", []) if r.get("thread") in ("main", "python-main")]
    if check(len(rows) == 1, "one input row for the main thread", [r.get("thread") for r in doc.get("input", [])]):
        pipeline = rows[0]["pipeline"]
        check(pipeline.startswith("from_tensor_slices at line %d" % line), "the pipeline starts at the user's line", pipeline)
        check("map(augment) at line %d" % line in pipeline, "the user's map is named augment", pipeline)
        for keras_op in ("permutation", "grab_batch", "flat_map", "zip", "range"):
            check(keras_op not in pipeline, "none of Keras's adapter (%s) in the user's pipeline" % keras_op, pipeline)
    check_tracing_time(out, doc)
    check_source_inputs(out, line)
    check_no_input_slow_op(out)
    check_budget_reader()
    check_closure_step()
    agtest.finish("real-code")


if __name__ == "__main__":
    main()
