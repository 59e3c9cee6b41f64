"""Threads that end give their ring slot back (issue 46): nothing dropped on
ordinary programs that start many short-lived threads, far more than a
process's 256 slots over the run, a few at a time.

    test_thread_slots.py predict   a small Keras model's predict() 500 times in a
                                   loop (each starts tf.data threads that end soon after)
    test_thread_slots.py threads   1,000 short-lived Python threads, four at a time,
                                   each calling a tf.function once

Oracles: TensorFlow's own count of the calls (a tf.Variable the called
function adds 1 to: the predict step's, the threaded function's), which the
recording's graph-function calls equal; and nothing dropped: every
process's dropped_events is 0, no meta.incomplete nor meta.dropped_events,
agprof run and agprof report say nothing of dropped events.  More threads
recorded than there are slots shows the slots were reused.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq  # noqa: E402

PREDICT = r'''
import json
import numpy as np
import tensorflow as tf
import keras

class Counted(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(4)
        self.steps = tf.Variable(0, dtype=tf.int64, trainable=False)

    def call(self, x):
        return self.dense(x)

    def predict_step(self, data):
        self.steps.assign_add(1)   # runs in the graph at every call of the predict function
        return super().predict_step(data)

model = Counted()
x = np.ones((8, 3), np.float32)
for _ in range(500):
    model.predict(x, verbose=0)
print("facts " + json.dumps({"predicts": 500, "calls": int(model.steps.numpy())}), flush=True)
'''

THREADS = r'''
import json
import threading
import tensorflow as tf

calls = tf.Variable(0, dtype=tf.int64)

@tf.function
def step(x):
    calls.assign_add(1)
    return x * 2.0

x = tf.constant([1.0, 2.0])
step(x)   # traced once, on the main thread
ran = []

def work():
    step(x)
    ran.append(1)

for _ in range(250):
    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
print("facts " + json.dumps({"threads": len(ran), "calls": int(calls.numpy())}), flush=True)
'''


def record(name, program, timeout=280):
    d = agtest.tmpdir()
    prog = os.path.join(d, name + ".py")
    with open(prog, "w") as fh:
        fh.write(program)
    out = os.path.join(d, name + ".agprof")
    p = agtest.run_agprof(out, [agtest.PYTHON, prog], timeout=timeout, cwd=d)
    err = p.stderr.decode(errors="replace")
    check_eq(p.returncode, 0, "%s: agprof run ends with the program's status" % name)
    check("dropped" not in err and "incomplete" not in err,
          "%s: agprof run warns of nothing dropped" % name, err[-600:])
    facts = agtest.facts_of(p.stdout)
    if not check(facts is not None, "%s: the program's facts line" % name, p.stdout[-400:]):
        agtest.finish("thread_slots-" + name)
    return out, facts


def nothing_dropped(out, name):
    """Every process's dropped_events is 0, meta says nothing is missing, the report neither."""
    db = agtest.open_recording(out)
    dropped = db.execute("SELECT pid, dropped_events FROM processes WHERE dropped_events != 0").fetchall()
    check_eq([tuple(r) for r in dropped], [], "%s: no process dropped events" % name)
    m = agtest.meta(db)
    check("incomplete" not in m, "%s: no meta.incomplete" % name, m.get("incomplete"))
    check(int(m.get("dropped_events") or 0) == 0, "%s: no meta.dropped_events" % name, m.get("dropped_events"))
    rc, txt, _ = agtest.agprof_cmd("report", out)
    check(rc == 0 and "dropped" not in txt and "incomplete" not in txt,
          "%s: agprof report says nothing of dropped events" % name, (rc, txt[:800]))
    return db


def main_pid(db):
    return agtest.q1(db, "SELECT pid FROM processes WHERE ppid NOT IN (SELECT pid FROM processes) ORDER BY start_ns")


def predict():
    out, facts = record("predict", PREDICT)
    check_eq(facts["calls"], 500, "predict: the predict step ran once per predict() (TensorFlow's count)")
    db = nothing_dropped(out, "predict")
    names = db.execute("SELECT s.text, count(*) FROM function_calls c JOIN strings s ON s.id = c.name_id"
                       " GROUP BY 1").fetchall()
    recorded = agtest.q1(db, "SELECT count(*) FROM function_calls")
    check(recorded == facts["calls"], "predict: the recorded graph-function calls = TensorFlow's count",
          [tuple(r) for r in names], facts["calls"])
    threads = agtest.q1(db, "SELECT count(*) FROM threads WHERE pid = ?", main_pid(db))
    check(threads > 256, "predict: more threads recorded than a process has slots (slots reused)", threads)
    db.close()


def threads():
    out, facts = record("threads", THREADS)
    check_eq(facts["threads"], 1000, "threads: every thread ran its call")
    check_eq(facts["calls"], 1001, "threads: TensorFlow counted 1,001 calls (the main thread's first)")
    db = nothing_dropped(out, "threads")
    pid = main_pid(db)
    calls = agtest.q1(db, "SELECT count(*) FROM function_calls c JOIN strings s ON s.id = c.name_id"
                          " WHERE s.text LIKE '%inference_step_%'")
    check_eq(calls, facts["calls"], "threads: the recorded calls of step = TensorFlow's count")
    callers = agtest.q1(db, "SELECT count(DISTINCT c.tid) FROM function_calls c JOIN strings s ON s.id = c.name_id"
                            " WHERE s.text LIKE '%inference_step_%' AND c.tid != ?", pid)
    check_eq(callers, 1000, "threads: each thread's call recorded on its own thread")
    db.close()


def main():
    agtest.need_agprof()
    {"predict": predict, "threads": threads}[sys.argv[1]]()
    agtest.finish("thread_slots-" + sys.argv[1])


if __name__ == "__main__":
    main()
