"""agprof.keras.Callback: record a Keras fit (or evaluate, predict) from inside it.

    import agprof.keras
    cb = agprof.keras.Callback("train.agprof", batches=(10, 20), log_dir="logs")
    model.fit(dataset, epochs=5, callbacks=[cb])
    cb.findings            # the report's findings (docs/report-json.md)

The recording is agprof.start()/agprof.stop() (_record.py): no `agprof run`
needed.  Keras is imported only when a Callback is made, and only the Keras
the program already uses; see Callback for how one object serves both Keras 3
(`keras`, `tf.keras`) and tf-keras 2 (`tf_keras`).
"""
import json
import os
import sys
import time
import warnings

from . import _record, _report

_TRAIN, _TEST, _PREDICT = "train", "test", "predict"
_TOP_FINDINGS = 3  # findings printed at the end; the rest are in callback.findings and agprof report
_concrete = {}  # {user-facing class: the class with the Keras bases, built on first use}


class Callback:
    """A Keras callback that records the fit with agprof and reports its findings at the end.

    Callback(path="train.agprof", batches=None, epochs=None, log_dir=None, report=True)

    path: the recording, written anew on every fit (or evaluate, predict).
      A relative path with log_dir is taken under log_dir/agprof, where
      TensorBoard's agprof tab lists it.
    batches: (first, last), record only those batches of the fit, both
      included, counted across epochs as TensorBoard's profile_batch counts
      them (the fit's first batch is 1).  A batch is one call of Keras's
      batch hooks, which is one call of its train function: with
      compile(steps_per_execution=N) that call runs N steps, an epoch's last
      what is left (10 steps an epoch at N=4: batches of 4, 4 and 2 steps),
      so batches=(2, 5) is 4 calls of the train function, up to 4N steps.
      Keras hands the hooks the step number as their batch argument; the
      count here ignores it.  Before the window the batch hooks do one
      increment and one integer compare.
    epochs: (first, last), record only those epochs of the fit, numbered as
      Keras prints them ("Epoch 1/5" is 1).  Not with batches.
    log_dir: also write what agprof found through tf.summary, for
      TensorBoard (see _write_summaries for the tags), into the run Keras's
      own summaries of the loop go to (log_dir/train for a fit,
      log_dir/validation for evaluate), so that they are beside the loss.
      Without it, next to a keras.callbacks.TensorBoard in the same fit, its
      log_dir (and its train run) is taken, found without being asked.  Per
      recorded epoch, with step = the epoch as Keras numbers it in its own
      epoch summaries (from 0; 0 for evaluate and predict), its figures, and
      the findings at the last one.  The fit is recorded once; the callback
      notes when each epoch begins (time.monotonic_ns(), the recording's
      clock) and, when the recording ends, asks the report for the figures
      of each epoch's time slice (`agprof report --slices`): a retrace in
      epoch 3 of a function first traced in epoch 0 is a retrace of epoch 3.
    report: print a few lines (the run in numbers, the top findings) at the end.

    After the recording: `findings` (list) and `report` (dict, the JSON report
    of docs/report-json.md); None before, and when nothing was recorded.

    Used alone in evaluate() or predict() it records that loop (batches then
    counts its batches; epochs does not apply).  Inside a fit, the
    validation's evaluate belongs to the fit's recording.  When the program
    already records (agprof.record(), agprof.start(), `agprof run`), it
    warns once (agprof.AgprofWarning) and records nothing; a failure to
    record or report is a warning too: the fit goes on.

    One object for both Kerases: Callback(...) returns an instance of a
    subclass of Callback built on first use whose bases are
    keras.callbacks.Callback (Keras 3; tf.keras is Keras 3 in TensorFlow
    2.16 and later) and, when the program has imported tf_keras,
    tf_keras.callbacks.Callback too.  The object is made before fit() says
    which Keras runs it, and a program may use both; neither Keras checks a
    callback's class, but each base brings what its Keras reads of a
    callback (Keras 3: the model property; tf_keras: the batch-hook
    queries), and isinstance() against either Keras's Callback holds.
    """

    def __new__(cls, *args, **kwargs):
        return super().__new__(_with_keras_bases(cls))

    def __init__(self, path="train.agprof", batches=None, epochs=None, log_dir=None, report=True):
        self._init_keras_bases()
        self.log_dir = os.fspath(log_dir) if log_dir is not None else None
        self._given_path = os.fspath(path)
        self.path = _recording_path(self._given_path, self.log_dir)
        self._tensorboard = None  # a keras.callbacks.TensorBoard of the same fit (_sibling_tensorboard)
        self.print_report = report
        self._first, self._last = _window(batches, "batches")
        self._epochs = _window(epochs, "epochs") if epochs is not None else None
        if batches is not None and epochs is not None:
            raise ValueError("agprof.keras.Callback: give batches or epochs, not both")
        self.findings = None
        self.report = None
        self._loop = None  # the loop whose hooks drive the window: a fit's validation is not one
        self._batch = 0
        self._epoch = 0
        self._recording = False
        self._warned = False
        self._marks = []  # (epoch, time.monotonic_ns()) where each recorded epoch's slice begins
        self._recorded_loop = _TRAIN

    def _init_keras_bases(self):
        """Each base's state.  tf_keras's __init__ is not called: it assigns self.model, which is
        Keras 3's read-only property when both are bases; its attributes are set here instead."""
        self.params = None
        keras3 = _keras3_base()
        if keras3 is not None and isinstance(self, keras3):
            keras3.__init__(self)
        else:
            self.model = None
        self.validation_data = None
        self._chief_worker_only = None
        # tf_keras converts every batch's logs to numpy for a callback with batch hooks unless it
        # takes tensors; the hooks never read logs, so this keeps them free of that sync.
        self._supports_tf_logs = True

    # What tf_keras asks of a callback (its base answers the same when it is a base): these keep
    # a Callback made before tf_keras was imported usable in a tf_keras fit.
    def _implements_train_batch_hooks(self):
        return True

    def _implements_test_batch_hooks(self):
        return True

    def _implements_predict_batch_hooks(self):
        return True

    # The loops.  Keras calls on_test_begin inside fit for the validation: the fit owns the window.
    def on_train_begin(self, logs=None):
        self._loop_begin(_TRAIN)

    def on_train_end(self, logs=None):
        self._loop_end(_TRAIN)

    def on_test_begin(self, logs=None):
        self._loop_begin(_TEST)

    def on_test_end(self, logs=None):
        self._loop_end(_TEST)

    def on_predict_begin(self, logs=None):
        self._loop_begin(_PREDICT)

    def on_predict_end(self, logs=None):
        self._loop_end(_PREDICT)

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch
        if self._recording and self._loop is _TRAIN:
            self._mark(epoch)
        elif self._epochs is not None and self._loop is _TRAIN and epoch + 1 == self._epochs[0]:
            self._begin()

    def on_epoch_end(self, epoch, logs=None):
        if self._epochs is not None and self._loop is _TRAIN and epoch + 1 == self._epochs[1]:
            self._end()

    # The batch hooks: one increment and one compare while the window has not come.
    def on_train_batch_begin(self, batch, logs=None):
        self._batch_begin(_TRAIN)

    def on_train_batch_end(self, batch, logs=None):
        self._batch_end(_TRAIN)

    def on_test_batch_begin(self, batch, logs=None):
        self._batch_begin(_TEST)

    def on_test_batch_end(self, batch, logs=None):
        self._batch_end(_TEST)

    def on_predict_batch_begin(self, batch, logs=None):
        self._batch_begin(_PREDICT)

    def on_predict_batch_end(self, batch, logs=None):
        self._batch_end(_PREDICT)

    def _batch_begin(self, loop):
        if loop is self._loop:
            self._batch += 1
            if self._batch == self._first:
                self._begin()

    def _batch_end(self, loop):
        if self._batch == self._last and loop is self._loop:
            self._end()

    def _loop_begin(self, loop):
        if self._loop is not None:
            if loop is not _TRAIN:
                return  # a fit's validation
            # fits do not nest: the fit before this one raised, and Keras never called its on_train_end
            self._loop = None
            self._end()
        self._loop, self._batch, self._epoch = loop, 0, 0
        self._find_tensorboard()
        if self._first is None and (self._epochs is None or loop is not _TRAIN):
            self._begin()

    def _find_tensorboard(self):
        """Next to a keras.callbacks.TensorBoard in the same fit and without a log_dir of its own: its
        log_dir, and the recording under it as with log_dir (found, not asked for)."""
        tb = _sibling_tensorboard(self)
        if tb is None or (self.log_dir is not None and self._tensorboard is None):
            return
        self._tensorboard = tb
        self.log_dir = os.fspath(tb.log_dir)
        self.path = _recording_path(self._given_path, self.log_dir)

    def _loop_end(self, loop):
        if loop is self._loop:
            self._loop = None
            self._end()  # a window past the loop's last batch ends with it

    def _begin(self):
        if self._recording or self._warned:
            return
        why = _record.recording_elsewhere()
        if why:
            self._warn("agprof.keras.Callback records nothing: %s" % why)
            return
        try:
            if self.log_dir is not None:
                os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
            self._marks = []
            self._mark(self._epoch)  # before the start: every recorded event is after the first edge
            _record.start(self.path, force=True, quiet=True)
        except (OSError, _record.AgprofError) as e:
            self._warn("agprof.keras.Callback cannot record: %s" % e)
            return
        self._recording = True
        self._recorded_loop = self._loop

    def _mark(self, epoch):
        """The slice of `epoch` begins now (the recording's clock), unless it has begun (a fit's recording
        starts at on_train_begin, before epoch 0's on_epoch_begin) or no time passed since the last."""
        now = time.monotonic_ns()
        if not self._marks or (epoch != self._marks[-1][0] and now > self._marks[-1][1]):
            self._marks.append((epoch, now))

    def _end(self):
        if not self._recording:
            return
        self._recording = False
        try:
            path = _record.stop()
            edges = [ns for _, ns in self._marks] + [max(time.monotonic_ns(), self._marks[-1][1] + 1)]
            self.report = _report.report(path, show=False, slices=edges if self.log_dir is not None else None)
        except _record.AgprofError as e:
            self._warn("agprof.keras.Callback: %s" % e)
            return
        self.findings = self.report["findings"]
        median_ns = _median_step_ns(path)
        if self.print_report:
            sys.stdout.write(_summary(self.report, median_ns, path))
            sys.stdout.flush()
        if self.log_dir is not None:
            _write_summaries(self._run_dir(), self.report, [e for e, _ in self._marks])

    def _run_dir(self):
        """Where the scalars go: the run Keras's TensorBoard callback writes the loop's own summaries to
        (log_dir/train for a fit, log_dir/validation for evaluate), so that they are beside the loss."""
        loop = self._recorded_loop
        mine = getattr(self._tensorboard, "_val_dir" if loop is _TEST else "_train_dir", None)
        if isinstance(mine, str) and mine:
            return mine
        return os.path.join(self.log_dir, {_TRAIN: "train", _TEST: "validation"}.get(loop, loop))

    def _warn(self, text):
        if not self._warned:
            self._warned = True
            warnings.warn(text, _record.AgprofWarning, stacklevel=4)


def _window(pair, what):
    """(first, last) of a batches or epochs argument, both 1 or more; (None, None) for None."""
    if pair is None:
        return None, None
    try:
        first, last = (int(x) for x in pair)
    except (TypeError, ValueError):
        raise ValueError("agprof.keras.Callback: %s must be a pair (first, last), got %r" % (what, pair)) from None
    if first < 1 or last < first:
        raise ValueError("agprof.keras.Callback: %s=(%d, %d): need 1 <= first <= last" % (what, first, last))
    return first, last


def _sibling_tensorboard(callback):
    """The keras.callbacks.TensorBoard (Keras 3's or tf_keras's) in the callback list that called
    `callback`'s hook, or None.  A callback is not told its siblings: the list is the `self` of a
    frame that called the hook (Keras's CallbackList), found a few frames up."""
    frame = sys._getframe(1)
    for _ in range(8):
        if frame is None:
            return None
        owner = frame.f_locals.get("self")
        siblings = getattr(owner, "callbacks", None) if owner is not callback else None
        if isinstance(siblings, (list, tuple)) and any(c is callback for c in siblings):
            for c in siblings:
                if type(c).__name__ == "TensorBoard" and isinstance(getattr(c, "log_dir", None), (str, os.PathLike)):
                    return c
            return None
        frame = frame.f_back
    return None


def _recording_path(path, log_dir):
    """Where the recording goes: a relative path with a log_dir under log_dir/agprof (the
    TensorBoard tab lists the recordings under its log directory), else path as given."""
    if log_dir is None or os.path.isabs(path):
        return path
    return os.path.join(log_dir, "agprof", path)


def _keras3_base():
    """keras.callbacks.Callback of Keras 3, or None (a TensorFlow whose keras is Keras 2)."""
    try:
        import keras
    except ImportError:
        return None
    base = getattr(getattr(keras, "callbacks", None), "Callback", None)
    major = keras.__version__.split(".")[0]
    return base if base is not None and major.isdigit() and int(major) >= 3 else None


def _keras_bases():
    """The Keras Callback classes to derive from: Keras 3's, and tf_keras's if the program imported it."""
    bases = [b for b in (_keras3_base(),) if b is not None]
    tf_keras = sys.modules.get("tf_keras")
    if tf_keras is not None:
        bases.append(tf_keras.callbacks.Callback)
    if not bases:
        raise ImportError("agprof.keras.Callback needs Keras 3 (keras) or tf_keras")
    return tuple(bases)


def _with_keras_bases(cls):
    """cls (Callback or a user's subclass of it) with the Keras bases; built once per set of bases."""
    bases = _keras_bases()
    if all(issubclass(cls, b) for b in bases):
        return cls
    key = (cls, bases)
    if key not in _concrete:
        _concrete[key] = type(cls.__name__, (cls,) + bases, {"__module__": cls.__module__,
                                                              "__qualname__": cls.__qualname__})
    return _concrete[key]


def _median_step_ns(path):
    """agprof diff's step time of the recording (its step function: the one called most, each call's
    start to the next call's start), from `agprof diff` of the recording with itself: the report
    JSON has no step time.  None when it cannot tell (fewer than two calls)."""
    try:
        status, out, _ = _report._run(["diff", "--format", "json", path, path])
        step = json.loads(out).get("step") if status == 0 else None
    except (ValueError, _record.AgprofError):
        return None
    return step.get("base_median_ns") if step else None


def _retraces(report):
    """Traces after each function's first, over all functions (the text report's "N retraces")."""
    return sum(len(fn.get("retraces") or []) for fn in report["functions"])


def _where(loc):
    """A location as file:line, the file relative to the working directory when under it."""
    if not loc:
        return "?"
    path = loc["file"]
    rel = os.path.relpath(path) if os.path.isabs(path) else path
    return "%s:%d" % (path if rel.startswith("..") else rel, loc["line"])


def _headline(report, median_ns):
    s = report["session"]
    step = ", median step %.2f ms" % (median_ns / 1e6) if median_ns else ""
    return ("%s (%s), %s, eager %.1f%% of the time%s"
            % (_count(s["traces"], "trace"), _count(_retraces(report), "retrace"),
               _count(s["function_calls"], "graph call"), 100 * (s["eager_share"] or 0), step))


def _count(n, noun):
    return "%d %s%s" % (n, noun, "" if n == 1 else "s")


def _summary(report, median_ns, path):
    """The few lines printed at the end: the run in numbers, the top findings."""
    findings = report["findings"]
    lines = ["agprof: %s; %s" % (_headline(report, median_ns), _count(len(findings), "finding"))]
    for n, f in enumerate(findings[:_TOP_FINDINGS], 1):
        about = "".join(" " + x for x in (f["function"], "[%s]" % f["cause"] if f["cause"] else None) if x)
        lines.append("  %d. %s %s%s at %s: %s" % (n, f["severity"], f["rule"], about, _where(f["location"]),
                                                 f["message"]))
    lines.append("  (agprof report %s: the fixes and every section)" % path)
    return "\n".join(lines) + "\n"


def _user_functions(report):
    """The names of the user's traced functions (owner "user"), in the report's order, once each."""
    names = []
    for fn in report["functions"]:
        if fn["owner"] == "user" and fn["traces"] and fn["name"] not in names:
            names.append(fn["name"])
    return names


def _scalars(piece, names):
    """[(tag, value)] of one time slice of the report (its `slices`), all by the report's definitions;
    every user function of the recording in `names` gets its traces and retraces (0 when none there)."""
    values = [("agprof/traces", piece["traces"]), ("agprof/retraces", piece["retraces"]),
              ("agprof/eager_share", piece["eager_share"]),
              # as the report's ranks define input_share: eager tf.data reads over the active time
              ("agprof/input_wait_share", piece["input_share"])]
    if piece["overhead_share"] is not None:
        # the executor's own share of the graph calls' time (the graph_ops section's overhead_share)
        values.append(("agprof/dispatch_overhead_share", piece["overhead_share"]))
    if piece["step_median_ns"]:
        values.append(("agprof/median_step_ms", piece["step_median_ns"] / 1e6))
    for name in names:
        fns = [fn for fn in piece["functions"] if fn["name"] == name and fn["owner"] == "user"]
        values += [("agprof/traces/" + name, sum(fn["traces"] for fn in fns)),
                   ("agprof/retraces/" + name, sum(fn["retraces"] for fn in fns))]
    return values


def _markdown(findings):
    """The findings as a markdown table for TensorBoard's text plugin."""
    if not findings:
        return "No findings."
    rows = ["| # | severity | rule | where | what | fix |", "|---|---|---|---|---|---|"]
    cell = lambda text: (text or "").replace("|", "\\|").replace("\n", " ")  # noqa: E731
    for n, f in enumerate(findings, 1):
        rows.append("| %d | %s | %s | %s | %s | %s |" % (n, f["severity"], f["rule"], cell(_where(f["location"])),
                                                     cell(f["message"]), cell(f["recommendation"])))
    return "\n".join(rows)


def _write_summaries(folder, report, epochs):
    """Scalars (TensorBoard's scalars plugin) per recorded epoch, at step = the epoch, from the report's
    slices (one per epoch, in order); the findings (its text plugin) once, at the last epoch.

    Through tf.summary.write with the plugins' metadata: tf.summary.scalar and
    tf.summary.text are TensorBoard's code and fail without it installed."""
    import tensorflow as tf
    from tensorflow.core.framework import summary_pb2

    def metadata(plugin, data_class):
        return summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name=plugin),
                                           data_class=data_class)

    scalar = metadata("scalars", summary_pb2.DATA_CLASS_SCALAR)
    names = _user_functions(report)
    writer = tf.summary.create_file_writer(folder)
    with writer.as_default():
        for epoch, piece in zip(epochs, report["slices"]):
            for tag, value in _scalars(piece, names):
                tf.summary.write(tag, tf.constant(value, tf.float32), step=epoch, metadata=scalar)
        tf.summary.write("agprof/findings", tf.constant(_markdown(report["findings"])), step=epochs[-1],
                         metadata=metadata("text", summary_pb2.DATA_CLASS_TENSOR))
    writer.close()
