"""Retracing because a new Python object is passed each call
(cause: python-object).

`Config` is an ordinary class with no __eq__/__hash__ of its own, so
tf.function can only key its trace cache on the object's identity (a weak
reference to it).  Building a fresh Config for every call, as below, makes
every call a new trace, although the graph built is the same each time.

Fix: build the config once and reuse it, give the class value semantics
(e.g. a frozen dataclass, which is hashable and compared by value), or pass
its tensor fields as tensors.
"""
import numpy as np
import tensorflow as tf

import oracle

CALLS = 6


class Config:
    def __init__(self, scale, clip):
        self.scale = scale
        self.clip = clip


@tf.function
def preprocess(x, cfg):
    return tf.clip_by_value(x * cfg.scale, -cfg.clip, cfg.clip)


def main():
    oracle.track("preprocess", preprocess)
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(8, 8)).astype(np.float32))
    for _ in range(CALLS):
        cfg = Config(scale=2.0, clip=1.5)  # same values, new object
        oracle.called("preprocess")
        traces_before = preprocess.experimental_get_tracing_count()
        out = preprocess(x, cfg)  # agprof: python-object
        if preprocess.experimental_get_tracing_count() > traces_before:
            oracle.traced_with("preprocess", x=x, cfg=cfg)
    print("max %.4f" % float(tf.reduce_max(out)))
    print("tracing count:", preprocess.experimental_get_tracing_count())


if __name__ == "__main__":
    with oracle.eager_window():
        main()
