"""The program test_keras_callback.py runs: real Keras fits with agprof.keras.Callback.

    python keras_workload.py keras3|paths|tf_keras OUT_DIR

keras3 uses Keras 3 (`import keras`) and never imports tf_keras; paths is
Keras 3 too, in the code paths issue 47 names (a custom train_step,
steps_per_execution=4, MirroredStrategy, evaluate and predict alone), in a
process of its own (the strategy's devices stay set up once made);
tf_keras uses tf-keras 2 only.  Each case writes its recording into
OUT_DIR and what the test compares it with (TensorFlow's own counters, the
times of each batch, the callback's findings and report) into
OUT_DIR/CASE.json.  The planted retrace: a user tf.function called once per
epoch with a Python float, so each epoch traces it again.
"""
import importlib.util
import json
import os
import sys
import threading
import time
import warnings

import numpy as np
import tensorflow as tf

import agprof

FLAVOUR, OUT = sys.argv[1], sys.argv[2]
if FLAVOUR == "tf_keras":
    import tf_keras as keras
else:
    import keras

EPOCHS, BATCH, ROWS = 3, 16, 70  # 5 batches an epoch, the last of 6 rows (drop_remainder=False)


@tf.function
def scale(v):
    return v * 2.0


class Planted(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        scale(float(epoch) + 0.5)  # agprof: retrace


STORM_EPOCH = 1  # "Epoch 2/3": the only epoch of the storm


@tf.function
def storm(x):
    return tf.reduce_sum(x)


class Storm(keras.callbacks.Callback):
    """A retrace storm in one epoch only: storm() traced once in epoch 0 (a [1, 4] batch), then, in epoch
    STORM_EPOCH, called after each batch with a batch of another shape ([n + 1, 4] at its n-th batch): a
    retrace a batch there, none elsewhere.  TensorFlow's tracing count at each epoch's end is the oracle."""

    def __init__(self):
        super().__init__()
        self.epoch, self.n, self.counts = 0, 0, []

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch, self.n = epoch, 0
        if epoch == 0:
            storm(tf.zeros([1, 4]))

    def on_train_batch_end(self, batch, logs=None):
        self.n += 1
        if self.epoch == STORM_EPOCH:
            storm(tf.zeros([self.n + 1, 4]))

    def on_epoch_end(self, epoch, logs=None):
        self.counts.append(storm.experimental_get_tracing_count())


class BatchClock(keras.callbacks.Callback):
    """For one loop (train, test or predict): the monotonic time (the recording's clock) at each batch's
    begin and end, numbered from 1 as agprof.keras.Callback counts them; in a fit the optimizer's step
    counter at each end (TensorFlow's own count of the steps run); and the traces of the watched user
    tf.functions ({name: tf.function}) from the loop's begin to its end, where a whole-loop recording begins
    and ends (a fit traces before on_train_begin too: its symbolic build).  Goes before the agprof callback."""

    def __init__(self, loop="train", watched=None):
        super().__init__()
        self.loop, self.watched, self.n, self.spans, self.steps, self.traces = loop, watched or {}, 0, {}, {}, {}

    def on_train_begin(self, logs=None):
        self.n, self.spans, self.steps = 0, {}, {}
        self._loop_edge("train", -1)

    def on_train_end(self, logs=None):
        self._loop_edge("train", 1)

    def on_test_begin(self, logs=None):
        self._loop_edge("test", -1)

    def on_test_end(self, logs=None):
        self._loop_edge("test", 1)

    def on_predict_begin(self, logs=None):
        self._loop_edge("predict", -1)

    def on_predict_end(self, logs=None):
        self._loop_edge("predict", 1)

    def _loop_edge(self, loop, sign):
        """At the loop's begin (sign -1) take each count off, at its end (+1) add it: the difference."""
        if loop == self.loop:
            for name, fn in self.watched.items():
                self.traces[name] = self.traces.get(name, 0) + sign * fn.experimental_get_tracing_count()

    def on_train_batch_begin(self, batch, logs=None):
        self._begin("train")

    def on_train_batch_end(self, batch, logs=None):
        self._end("train")

    def on_test_batch_begin(self, batch, logs=None):
        self._begin("test")

    def on_test_batch_end(self, batch, logs=None):
        self._end("test")

    def on_predict_batch_begin(self, batch, logs=None):
        self._begin("predict")

    def on_predict_batch_end(self, batch, logs=None):
        self._end("predict")

    def _begin(self, loop):
        if loop == self.loop:
            self.n += 1
            self.spans[self.n] = [time.monotonic_ns(), None]

    def _end(self, loop):
        if loop == self.loop:
            self.spans[self.n][1] = time.monotonic_ns()
            if loop == "train":
                self.steps[self.n] = int(self.model.optimizer.iterations.numpy())


def data(rows=ROWS):
    rng = np.random.default_rng(0)
    x, y = rng.random((rows, 4), dtype=np.float32), rng.random((rows, 1), dtype=np.float32)
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH, drop_remainder=False)


def model(steps_per_execution=1):
    m = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)])
    m.compile(optimizer="sgd", loss="mse", steps_per_execution=steps_per_execution)
    return m


def dump(case, **facts):
    with open(os.path.join(OUT, case + ".json"), "w") as f:
        json.dump(facts, f)


def callback(case, **kwargs):
    return agprof.keras.Callback(os.path.join(OUT, case + ".agprof"), **kwargs)


def whole():
    """The whole fit, the planted retrace, TensorBoard summaries."""
    cb = callback("whole", log_dir=os.path.join(OUT, "logs"))
    model().fit(data(), epochs=EPOCHS, verbose=0, callbacks=[Planted(), cb])
    dump("whole", tracing_count=scale.experimental_get_tracing_count(), findings=cb.findings, report=cb.report,
         bases=[c.__module__ + "." + c.__qualname__ for c in type(cb).__mro__],
         is_keras_callback=isinstance(cb, keras.callbacks.Callback))


def storm_fit():
    """The whole fit with a retrace storm in epoch STORM_EPOCH only, TensorBoard summaries per epoch."""
    cb, counter = callback("storm", log_dir=os.path.join(OUT, "storm_logs")), Storm()
    model().fit(data(), epochs=EPOCHS, verbose=0, callbacks=[counter, cb])
    dump("storm", counts=counter.counts, tracing_count=storm.experimental_get_tracing_count(), report=cb.report)


def sibling():
    """Next to Keras's own TensorBoard callback and no log_dir given: the callback takes its log_dir (the
    recording, a relative path, under log_dir/agprof) and writes its scalars into the train run, beside
    Keras's epoch_loss."""
    cb = agprof.keras.Callback("sibling.agprof")
    model().fit(data(), epochs=EPOCHS, verbose=0,
                callbacks=[keras.callbacks.TensorBoard(log_dir=os.path.join(OUT, "tb_logs")), cb])
    dump("sibling", path=cb.path, log_dir=cb.log_dir, tracing_count=scale.experimental_get_tracing_count())


def window(case, **kwargs):
    """A window of the fit: each batch's span, to place the recorded calls in their batches."""
    clock = BatchClock()
    model().fit(data(), epochs=EPOCHS, verbose=0, callbacks=[clock, callback(case, **kwargs)])
    dump(case, spans=clock.spans)


def evaluate():
    cb = callback("evaluate")
    model().evaluate(data(), verbose=0, callbacks=[cb])
    dump("evaluate", findings=cb.findings)


def nested():
    """Under an outer agprof.record(): the callback warns once and records nothing; the fit goes on."""
    cb = callback("nested")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with agprof.record(os.path.join(OUT, "outer.agprof"), quiet=True):
            history = model().fit(data(), epochs=2, verbose=0, validation_data=data(), callbacks=[cb])
    dump("nested", epochs_run=len(history.history["loss"]), findings=cb.findings,
         warnings=[(w.category.__name__, str(w.message)) for w in caught if "agprof" in str(w.message)])


# The code paths of issue 47 (flavour paths).  The oracles: user tf.functions' tracing counts at the
# loop's begin and end (BatchClock), the Python body of a custom train_step (it runs once per trace of the
# step), the optimizer's step counter, each batch's span.
SPE, SPE_ROWS = 4, 150  # steps_per_execution=4 over 10 steps an epoch (the last of 6 rows): executions of 4, 4, 2
STEP_BODY_RUNS = [0]  # CustomStep.train_step's Python body: once per trace of Keras's step function


@tf.function
def clipped(grads):
    return [tf.clip_by_norm(g, 1.0) for g in grads]


class Squash(keras.layers.Layer):
    """A layer whose call is a user tf.function (its own: a fresh cache in each model, which Keras's train,
    test and predict functions trace), and the thread and time of each of its traces.  With its output shape given, the
    functional model's build does not call it."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.traced = []
        self.fn = tf.function(self.squash)

    def squash(self, x):
        self.traced.append((threading.get_native_id(), time.monotonic_ns()))  # Python runs here once a trace
        return x / (1.0 + tf.abs(x))

    def call(self, x):
        return self.fn(x)

    def compute_output_shape(self, input_shape):
        return input_shape


class CustomStep(keras.Model):
    """fit() through the model's own train_step, which calls a user tf.function on the gradients."""

    def train_step(self, data):
        STEP_BODY_RUNS[0] += 1
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compute_loss(x=x, y=y, y_pred=self(x, training=True))
        grads = clipped(tape.gradient(loss, self.trainable_variables))
        self.optimizer.apply(grads, self.trainable_variables)
        return {"loss": loss}


def squash_model():
    """A model with a Squash layer, and the layer."""
    inputs, layer = keras.Input((4,)), Squash()
    m = keras.Model(inputs, keras.layers.Dense(1)(layer(keras.layers.Dense(8)(inputs))))
    m.compile(optimizer="sgd", loss="mse")
    return m, layer


def counted_fit(case, m, epochs, rows=ROWS, watched=None, **kwargs):
    """m's fit with the callback and a BatchClock: the clock's facts."""
    clock = BatchClock(watched=watched)
    m.fit(data(rows), epochs=epochs, verbose=0, callbacks=[clock, callback(case, **kwargs)])
    return dict(spans=clock.spans, steps=clock.steps, traces=clock.traces)


def custom_step():
    """(a) A Model subclass with its own train_step, the whole fit recorded."""
    inputs = keras.Input((4,))
    m = CustomStep(inputs, keras.layers.Dense(1)(keras.layers.Dense(8, activation="relu")(inputs)))
    m.compile(optimizer="sgd", loss="mse")
    facts = counted_fit("custom_step", m, 2, watched={"clipped": clipped})
    dump("custom_step", step_body_runs=STEP_BODY_RUNS[0], **facts)


def steps_per_execution():
    """(b) compile(steps_per_execution=4), the window batches=(2, 5): batches are executions of up to 4 steps."""
    facts = counted_fit("spe", model(SPE), 2, rows=SPE_ROWS, batches=(2, 5))
    dump("spe", steps_per_epoch=-(-SPE_ROWS // BATCH), steps_per_execution=SPE, **facts)


def mirrored():
    """(c) Built, compiled and fitted under MirroredStrategy (one replica, CPU:0 here)."""
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        m, layer = squash_model()
    facts = counted_fit("mirrored", m, 2, watched={"squash": layer.fn})
    dump("mirrored", replicas=strategy.num_replicas_in_sync, strategy=type(m.distribute_strategy).__name__,
         squash_traced=list(layer.traced), main_tid=threading.get_native_id(), **facts)


def evaluate_alone():
    """(d) evaluate() alone, the whole loop recorded."""
    m, layer = squash_model()
    clock = BatchClock("test", {"squash": layer.fn})
    m.evaluate(data(), verbose=0, callbacks=[clock, callback("evaluate_alone")])
    dump("evaluate_alone", spans=clock.spans, traces=clock.traces)


def predict_alone():
    """(d) predict() alone: the whole loop, then a window batches=(2, 4) of a second predict.  Keras's predict
    function is a tf.function of its own (model.predict_function): its tracing count is TensorFlow's."""
    m, layer = squash_model()
    clock = BatchClock("predict", {"squash": layer.fn})
    m.predict(data(), verbose=0, callbacks=[clock, callback("predict_alone")])
    dump("predict_alone", spans=clock.spans, traces=clock.traces,
         predict_traces=m.predict_function.experimental_get_tracing_count(),
         predict_fn=m.predict_function.python_function.__name__)
    clock = BatchClock("predict")
    m.predict(data(), verbose=0, callbacks=[clock, callback("predict_window", batches=(2, 4))])
    dump("predict_window", spans=clock.spans)


def main():
    if FLAVOUR == "paths":
        for case in (custom_step, steps_per_execution, evaluate_alone, predict_alone, mirrored):
            case()
        return
    whole()
    storm_fit()
    if importlib.util.find_spec("tensorboard") is not None:  # Keras's TensorBoard callback needs it
        sibling()
    if FLAVOUR == "keras3":
        window("batches", batches=(3, 6))
        window("epochs", epochs=(2, 2))
        evaluate()
        nested()
    dump("modules", tf_keras="tf_keras" in sys.modules)


if __name__ == "__main__":
    main()
