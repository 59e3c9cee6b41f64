"""agprof.keras.Callback (issue 47) in real Keras fits: keras_workload.py with Keras 3, again with Keras 3
in the code paths the issue names (flavour paths: a custom train_step, steps_per_execution=4,
MirroredStrategy, evaluate and predict alone), and with tf-keras 2 when this Python has it (./setup's
extra Pythons have not: that part is skipped, the Keras 3 parts still run).

Oracles are TensorFlow's and the program's own: the recorded traces of a user function equal its
experimental_get_tracing_count() (over the recorded loop), or the runs of its Python body; a window's
recorded calls of Keras's step function fall one in each batch of the window, by the batches' own
clock; the optimizer's step counter says how many steps each batch ran; the TensorBoard scalars, one point per
epoch in the fit's train run (beside Keras's own epoch_loss when its TensorBoard callback is in the fit, whose
log_dir is then found without being asked), equal the report's slices, add up to the whole run, and show a retrace storm planted in one epoch
in that epoch only, at TensorFlow's count (read back by TensorBoard's own reader where it is installed); the retracing finding names the workload's
marked line.
"""
import importlib.util
import glob
import json
import os
import re
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
import agtest  # noqa: E402

WORKLOAD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_workload.py")
TRAIN_FN = "__inference_multi_step_on_iterator_%"  # Keras 3's train (and test) function: a batch a call
PREDICT_FN = "__inference_one_step_on_data_distributed_%"  # Keras 3's predict function (steps_per_execution=1)


def run_workload(flavour, out):
    """Run the workload; returns its stdout, or None when it failed (a failure is recorded)."""
    r = subprocess.run([agtest.PYTHON, WORKLOAD, flavour, out], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=240)
    ok = agtest.check(r.returncode == 0, "%s workload: %s" % (flavour, r.stderr[-2000:]))
    return r.stdout if ok else None


def facts(out, case):
    with open(os.path.join(out, case + ".json")) as f:
        return json.load(f)


def query(path, sql, *args):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def recorded_traces(path, function):
    return query(path, "SELECT count(*) FROM traces t JOIN functions f ON f.id = t.function_id "
                       "JOIN strings s ON s.id = f.name_id WHERE s.text = ?", function)[0][0]


def marked_line():
    with open(WORKLOAD) as f:
        return next(n for n, text in enumerate(f, 1) if re.search(r"#\s*agprof:\s*retrace", text))


def check_whole(flavour, out, stdout):
    """The whole fit: the planted function's traces, the retracing finding at the marked line, the printout."""
    got = facts(out, "whole")
    path = os.path.join(out, "whole.agprof")
    agtest.check_eq(recorded_traces(path, "scale"), got["tracing_count"],
                    "%s: recorded traces of scale = TensorFlow's tracing count" % flavour)
    agtest.check(got["tracing_count"] >= 3, "%s: the planted retrace happened" % flavour, got["tracing_count"], ">= 3")
    where = [(f["function"], f["cause"], f["location"]) for f in got["findings"] or [] if f["rule"] == "retracing"]
    agtest.check(("scale", "python-value", {"file": WORKLOAD, "line": marked_line()}) in where,
                 "%s: callback.findings has the retracing of scale at the marked line" % flavour, where)
    agtest.check_eq(got["findings"], (got["report"] or {}).get("findings"), "%s: findings = report's" % flavour)
    agtest.check(got["is_keras_callback"], "%s: an instance of the Keras's own Callback" % flavour, got["bases"])
    agtest.check(re.search(r"^agprof: \d+ traces .*\n  1\. warning retracing scale \[python-value\] at ",
                           stdout or "", re.M) is not None, "%s: the headline and top finding printed" % flavour,
                 (stdout or "")[-800:])
    return got["report"]


def events(folder):
    """{tag: {step: value}} of the event files in folder, read by TensorBoard's own reader (its
    EventAccumulator) where TensorBoard is installed, else by TensorFlow's record reader."""
    try:
        from tensorboard.backend.event_processing import event_accumulator as ea
    except ImportError:
        ea = None
    if ea is not None:
        acc = ea.EventAccumulator(folder, size_guidance={ea.TENSORS: 0})
        acc.Reload()
        import tensorflow as tf
        return {tag: {e.step: tf.make_ndarray(e.tensor_proto) for e in acc.Tensors(tag)}
                for tag in acc.Tags()["tensors"]}
    import tensorflow as tf
    from tensorflow.core.util import event_pb2
    found = {}
    for f in sorted(glob.glob(os.path.join(folder, "events.out.tfevents.*"))):
        for record in tf.data.TFRecordDataset(f):
            event = event_pb2.Event.FromString(record.numpy())
            for v in event.summary.value:
                found.setdefault(v.tag, {})[event.step] = tf.make_ndarray(v.tensor)
    return found


def close(a, b):
    return a is not None and b is not None and abs(float(a) - b) <= 1e-6 * max(1, abs(b))


def check_log_dir(out, report):
    """One point per epoch (step = the epoch, from 0) of each scalar, equal to the report's slice of that epoch;
    the epochs' traces add up to the whole run's; the findings once, at the last epoch."""
    slices = report.get("slices") or []
    agtest.check_eq(len(slices), 3, "the report has a slice per epoch")
    got = events(os.path.join(out, "logs", "train"))  # the fit's run: Keras's own summaries go there too
    for epoch, piece in enumerate(slices):
        want = {"agprof/traces": piece["traces"], "agprof/retraces": piece["retraces"],
                "agprof/eager_share": piece["eager_share"], "agprof/input_wait_share": piece["input_share"],
                "agprof/traces/scale": sum(f["traces"] for f in piece["functions"] if f["name"] == "scale")}
        if piece["step_median_ns"]:
            want["agprof/median_step_ms"] = piece["step_median_ns"] / 1e6
        for tag, value in want.items():
            written = got.get(tag, {}).get(epoch)
            agtest.check(close(written, value), "epoch %d: TensorBoard scalar %s = the report's slice" % (epoch, tag),
                         None if written is None else float(written), value)
    s = report["session"]
    for tag, whole in (("agprof/traces", s["traces"]),
                       ("agprof/retraces", sum(len(fn["retraces"]) for fn in report["functions"])),
                       ("agprof/traces/scale", next(fn["traces"] for fn in report["functions"] if fn["name"] == "scale"))):
        agtest.check_eq(sorted(got.get(tag, {})), [0, 1, 2], "%s: a point at each epoch" % tag)
        agtest.check_eq(sum(int(v) for v in got.get(tag, {}).values()), whole, "%s: the epochs add up to the run" % tag)
    agtest.check_eq(sum(p["eager_ns"] for p in slices), s["eager_ns"], "the slices' eager time adds up to the run's")
    agtest.check_eq(sum(p["active_ns"] for p in slices), s["active_ns"], "the slices' active time adds up to the run's")
    text = got.get("agprof/findings", {})
    agtest.check_eq(sorted(text), [2], "the findings written once, at the last epoch")
    text = text.get(2, b"")
    text = text.item().decode() if hasattr(text, "item") else ""
    agtest.check("| retracing |" in text and "scale was traced" in text, "the findings as markdown", text[:300])


def check_sibling(flavour, out):
    """Beside keras.callbacks.TensorBoard, no log_dir given: its log_dir found, the recording under
    log_dir/agprof, agprof's scalars in its train run beside Keras's own epoch_loss, a point per epoch."""
    if not os.path.exists(os.path.join(out, "sibling.json")):
        print("skip the sibling part for %s: no tensorboard in %s (Keras's own callback needs it)"
              % (flavour, agtest.PYTHON))
        return
    got = facts(out, "sibling")
    logs = os.path.join(out, "tb_logs")
    agtest.check_eq(got["log_dir"], logs, "%s sibling: the TensorBoard callback's log_dir, found" % flavour)
    agtest.check(got["path"] == os.path.join(logs, "agprof", "sibling.agprof") and os.path.exists(got["path"]),
                 "%s sibling: the recording under log_dir/agprof" % flavour, got["path"])
    tags = events(os.path.join(logs, "train"))
    agtest.check("epoch_loss" in tags, "%s sibling: Keras's own epoch_loss in the train run" % flavour, sorted(tags))
    agtest.check_eq(sorted(tags.get("agprof/traces", {})), [0, 1, 2],
                    "%s sibling: agprof/traces beside it, a point per epoch" % flavour)
    agtest.check_eq(sum(int(v) for v in tags.get("agprof/traces", {}).values()),
                    query(got["path"], "SELECT count(*) FROM traces")[0][0],
                    "%s sibling: the epochs' traces add up to the recording's" % flavour)


def check_storm(flavour, out):
    """A retrace storm in one epoch: per epoch, TensorBoard's points of storm's traces and retraces are
    TensorFlow's count over that epoch; none in the other epochs; the epochs add up to the run."""
    got = facts(out, "storm")
    counts = got["counts"]  # storm's tracing count at each epoch's end
    per_epoch = [b - a for a, b in zip([0] + counts, counts)]
    agtest.check_eq(per_epoch, [1, 5, 0], "%s storm: TensorFlow traced storm once in epoch 0, 5 times in epoch 1"
                    % flavour)
    tags = events(os.path.join(out, "storm_logs", "train"))
    traces = [int(tags.get("agprof/traces/storm", {}).get(e, -1)) for e in range(3)]
    retraces = [int(tags.get("agprof/retraces/storm", {}).get(e, -1)) for e in range(3)]
    agtest.check_eq(traces, per_epoch, "%s storm: agprof/traces/storm per epoch = TensorFlow's count" % flavour)
    agtest.check_eq(retraces, [0, 5, 0], "%s storm: the retraces in epoch 1 only (the first trace was epoch 0's)"
                    % flavour)
    agtest.check_eq(sum(traces), got["tracing_count"], "%s storm: the epochs add up to experimental_get_tracing_count()"
                    % flavour)
    total = [int(tags.get("agprof/retraces", {}).get(e, -1)) for e in range(3)]
    # epoch 0 may hold a library's retrace (tf_keras traces its train function again there): the storm stands out
    agtest.check(total[1] >= 5 and total[0] < total[1] and total[2] == 0,
                 "%s storm: agprof/retraces shows the storm's epoch" % flavour, total, "[< epoch 1's, >= 5, 0]")
    s = got["report"]["session"]
    agtest.check_eq(sum(int(tags.get("agprof/traces", {}).get(e, 0)) for e in range(3)), s["traces"],
                    "%s storm: agprof/traces over the epochs = the report's session traces" % flavour)


def check_window(out, case, numbers, function=TRAIN_FN):
    """The recorded calls of Keras's step function: one inside each batch of the window, none elsewhere."""
    spans = facts(out, case)["spans"]
    starts = [r[0] for r in query(os.path.join(out, case + ".agprof"),
                                  "SELECT c.start_ns FROM function_calls c JOIN strings s ON s.id = c.name_id "
                                  "WHERE s.text LIKE ? ORDER BY c.start_ns", function)]
    agtest.check_eq(len(starts), len(numbers), "%s: calls of %s recorded" % (case, function))
    placed = [next((int(n) for n, (b, e) in spans.items() if b <= t <= e), None) for t in starts]
    agtest.check_eq(placed, list(numbers), "%s: the batches (from 1) the recorded calls ran in" % case)


def check_whole_loop(out, case, function=TRAIN_FN):
    """A loop recorded whole: its step function's calls, one in each of its batches, and each user function's
    recorded traces = its tracing count over the loop (at least one: the check can tell)."""
    got = facts(out, case)
    check_window(out, case, range(1, len(got["spans"]) + 1), function)
    for name, count in got["traces"].items():
        agtest.check_eq(recorded_traces(os.path.join(out, case + ".agprof"), name), count,
                        "%s: recorded traces of %s = TensorFlow's tracing count over the loop" % (case, name))
        agtest.check(count >= 1, "%s: %s was traced inside the loop" % (case, name), count, ">= 1")
    return got


def steps_per_batch(got):
    """The steps each batch ran, by the optimizer's step counter at each batch's end."""
    ends = [got["steps"][str(n)] for n in range(1, len(got["steps"]) + 1)]
    return [b - a for a, b in zip([0] + ends, ends)]


def check_keras3(out):
    stdout = run_workload("keras3", out)
    if stdout is None:
        return
    check_log_dir(out, check_whole("keras3", out, stdout))
    check_storm("keras3", out)
    check_sibling("keras3", out)
    check_window(out, "batches", range(3, 7))
    check_window(out, "epochs", range(6, 11))  # epoch 2: batches 6 to 10, 5 an epoch
    agtest.check(facts(out, "evaluate")["findings"] is not None and os.path.exists(os.path.join(out, "evaluate.agprof")),
                 "evaluate() alone is recorded and reported")
    nested = facts(out, "nested")
    agtest.check_eq(nested["epochs_run"], 2, "under agprof.record(): the fit ran all its epochs")
    agtest.check_eq([w[0] for w in nested["warnings"]], ["AgprofWarning"], "under agprof.record(): one warning")
    agtest.check(all("already recording to '%s'" % os.path.join(out, "outer.agprof") in w[1] for w in nested["warnings"]),
                 "the warning says who records", nested["warnings"])
    agtest.check_eq(nested["findings"], None, "under agprof.record(): the callback reports nothing")
    agtest.check(not os.path.exists(os.path.join(out, "nested.agprof")), "under agprof.record(): no second recording")
    agtest.check(query(os.path.join(out, "outer.agprof"), "SELECT count(*) FROM function_calls")[0][0] > 0,
                 "the outer recording holds the fit")
    agtest.check_eq(facts(out, "modules")["tf_keras"], False, "Keras 3 alone: tf_keras never imported")


def check_custom_step(out):
    """(a) fit through a Model subclass's train_step: a batch a step, Keras's step function traced once per
    run of train_step's Python body, the user function it calls at its tracing count."""
    got = check_whole_loop(out, "custom_step")
    agtest.check_eq(steps_per_batch(got), [1] * len(got["spans"]), "custom_step: one step a batch (optimizer steps)")
    agtest.check_eq(recorded_traces(os.path.join(out, "custom_step.agprof"), "one_step_on_data"), got["step_body_runs"],
                    "custom_step: recorded traces of Keras's step function = runs of train_step's Python body")


def check_steps_per_execution(out):
    """(b) steps_per_execution=N: a batch is one call of the batch hooks = one call of the train function, which
    runs N steps (an epoch's last runs what is left), so batches=(2, 5) is four calls."""
    got = facts(out, "spe")
    n, steps = got["steps_per_execution"], got["steps_per_epoch"]
    per_epoch = [n] * (steps // n) + ([steps % n] if steps % n else [])
    agtest.check_eq(steps_per_batch(got), per_epoch * 2, "spe: the steps each batch ran (the optimizer's counter)")
    check_window(out, "spe", range(2, 6))


def check_mirrored(out):
    """(c) MirroredStrategy: the fit's calls, and the layer's function traced on the replica's thread(s), as the
    trace's own Python body saw it."""
    got = check_whole_loop(out, "mirrored")
    agtest.check_eq((got["strategy"], got["replicas"]), ("MirroredStrategy", 1), "mirrored: the strategy, one replica")
    agtest.check_eq(steps_per_batch(got), [1] * len(got["spans"]), "mirrored: one step a batch (optimizer steps)")
    path = os.path.join(out, "mirrored.agprof")
    begin, end = (int(query(path, "SELECT value FROM meta WHERE key = ?", k)[0][0]) for k in ("start_ns", "end_ns"))
    tids = [r[0] for r in query(path, "SELECT t.tid FROM traces t JOIN functions f ON f.id = t.function_id JOIN strings "
                                      "s ON s.id = f.name_id WHERE s.text = 'squash' ORDER BY t.start_ns")]
    agtest.check_eq(tids, [tid for tid, ns in got["squash_traced"] if begin <= ns <= end],
                    "mirrored: the threads of squash's recorded traces = those its Python body ran on")


def check_alone(out):
    """(d) evaluate() and predict() alone: each loop whole, then a window of predict's batches."""
    check_whole_loop(out, "evaluate_alone")
    got = check_whole_loop(out, "predict_alone", PREDICT_FN)
    agtest.check_eq(recorded_traces(os.path.join(out, "predict_alone.agprof"), got["predict_fn"]), got["predict_traces"],
                    "predict_alone: recorded traces of the predict function = its tracing count")
    check_window(out, "predict_window", range(2, 5), PREDICT_FN)


def same_keras_as(python):
    """True when PYTHON has this Python's Keras version (importlib.metadata: no import of Keras)."""
    ask = "import importlib.metadata as m; print(m.version('keras'))"
    there = subprocess.run([python, "-c", ask], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    here = subprocess.run([agtest.PYTHON, "-c", ask], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return there.returncode == 0 and there.stdout.strip() == here.stdout.strip()


def check_paths(out):
    # --paths-unless-keras-of PY (tests/pythons): the paths are Keras's code, the same where the Keras is
    if "--paths-unless-keras-of" in sys.argv:
        main_python = sys.argv[sys.argv.index("--paths-unless-keras-of") + 1]
        if same_keras_as(main_python):
            print("skip the paths part: the Keras of %s, whose python-keras-callback runs it" % main_python)
            return
    if run_workload("paths", out) is None:
        return
    for check, cases in ((check_custom_step, ["custom_step"]), (check_steps_per_execution, ["spe"]),
                         (check_mirrored, ["mirrored"]),
                         (check_alone, ["evaluate_alone", "predict_alone", "predict_window"])):
        missing = [c for c in cases if not os.path.exists(os.path.join(out, c + ".agprof"))]
        if agtest.check(not missing, "paths: the callback wrote its recordings", missing, []):
            check(out)


def check_tf_keras(out):
    if importlib.util.find_spec("tf_keras") is None:
        print("skip the tf_keras part: no tf_keras in %s (the Keras 3 parts ran)" % agtest.PYTHON)
        return
    stdout = run_workload("tf_keras", out)
    if stdout is None:
        return
    check_whole("tf_keras", out, stdout)
    check_storm("tf_keras", out)
    check_sibling("tf_keras", out)
    bases = facts(out, "whole")["bases"]
    agtest.check(any(b.startswith("tf_keras.") for b in bases), "tf_keras: the class has tf_keras's base", bases)


def main():
    tmp = agtest.agtestlib.tmpdir("agprof-keras-")
    for flavour, check in (("keras3", check_keras3), ("paths", check_paths), ("tf_keras", check_tf_keras)):
        out = os.path.join(tmp, flavour)
        os.mkdir(out)
        check(out)


if __name__ == "__main__":
    agtest.need_agprof()
    main()
    agtest.finish("python-keras-callback")
