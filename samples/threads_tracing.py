"""Four threads, each tracing its own tf.function five times at once.

Released together by a barrier, each thread calls its function with five
new shapes, so that traces of different functions overlap on the threads.
Each body prints (a Python side effect, run at tracing only) and appends
to a list that outlives the trace: the watch must see both in every trace,
on its own function's lines.  Prints TensorFlow's tracing count per
function and the lines of those statements as JSON ("facts {...}").
"""
import inspect
import json
import threading

import tensorflow as tf

KEPT = []


def make(k):
    @tf.function
    def body(x):
        y = x
        for _ in range(8):
            y = y * float(k + 2) + 1.0
        print("tracing", k)  # agprof: print
        KEPT.append(y)  # agprof: list-append
        return tf.reduce_sum(y)
    body.__name__ = body.python_function.__name__ = "body_%d" % k
    return body


FUNCTIONS = [make(k) for k in range(4)]


def work(fn, barrier):
    barrier.wait()
    for n in range(1, 6):
        fn(tf.ones([n]))


def main():
    barrier = threading.Barrier(len(FUNCTIONS))
    threads = [threading.Thread(target=work, args=(fn, barrier)) for fn in FUNCTIONS]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    src, first = inspect.getsourcelines(make)
    lines = {what: first + i for i, text in enumerate(src) for what in ("print", "list-append")
             if "# agprof: " + what in text}
    print("facts " + json.dumps({"counts": {fn.python_function.__name__: fn.experimental_get_tracing_count()
                                            for fn in FUNCTIONS}, "lines": lines}))


if __name__ == "__main__":
    main()
