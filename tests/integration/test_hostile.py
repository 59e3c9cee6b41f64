"""A hostile workload under `agprof run`: past the caps (docs/collector.md,
"Caps"), the run goes on and ends normally, and the recording says in one
line of meta.incomplete (and `agprof report` says) what it lacks.

    test_hostile.py threads   300 Python threads alive at once, each running one eager op
                              (a process's threads past AGP_MAX_THREADS at once get no
                              buffer), then 1,000 short-lived ones, four at a time, all
                              recorded (a thread that ends gives its slot back)
    test_hostile.py forks     1,100 forked children (a recording's processes
                              past WRITER_MAX_STREAMS are not read)
Oracles: the program's own counts (threads that ran their op, forks, its
tf.function's experimental_get_tracing_count() after the storm).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq  # noqa: E402

THREADS = r'''
import threading, tensorflow as tf
x = tf.constant(1.0)
ran, later = [], []
storm = threading.Barrier(300)
def work():
    ran.append(float(tf.add(x, 1.0)))   # one eager op on a thread of its own
    storm.wait()                        # 300 threads alive at once: past the 256 slots
def short():
    later.append(float(tf.multiply(x, 2.0)))
ts = [threading.Thread(target=work) for _ in range(300)]
for t in ts:
    t.start()
for t in ts:
    t.join()
for _ in range(250):                    # the storm's slots come back as its threads end
    ts = [threading.Thread(target=short) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
@tf.function
def after(v, k):
    return v * k
for k in range(3):
    after(x, float(k))       # the main thread still records: three traces
print("RAN", len(ran), "LATER", len(later), "TRACES", after.experimental_get_tracing_count(), flush=True)
'''

FORKS = r'''
import os
n = 0
for i in range(1100):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    n += 1
print("FORKS", n, flush=True)
'''


def run(d, name, program):
    prog = os.path.join(d, name + ".py")
    with open(prog, "w") as fh:
        fh.write(program)
    out = os.path.join(d, name + ".agprof")
    p = agtest.run_agprof(out, [agtest.PYTHON, prog], timeout=300, cwd=d)
    text = p.stdout.decode(errors="replace")
    err = p.stderr.decode(errors="replace")
    check_eq(p.returncode, 0, "%s: agprof run ends normally, with the program's status" % name)
    check("incomplete recording" in err, "%s: agprof run warns that the recording is incomplete" % name, err[-500:])
    return out, text


def common(out, name, words):
    """meta.incomplete says which cap, in one line; report shows it (text and JSON) and exits 0."""
    db = agtest.open_recording(out)
    note = agtest.meta(db).get("incomplete") or ""
    check(all(w in note for w in words) and "\n" not in note,
          "%s: meta.incomplete names the cap in one line" % name, note, words)
    rc, txt, _ = agtest.agprof_cmd("report", out)
    check(rc == 0 and "incomplete: " in txt and words[0] in txt, "%s: agprof report says it" % name, (rc, txt[:600]))
    rc, js, _ = agtest.agprof_cmd("report", "--format", "json", out)
    check(rc == 0 and json.loads(js)["session"].get("incomplete") == note,
          "%s: report's JSON has session.incomplete" % name, js[:300])
    return db


def threads(d):
    out, text = run(d, "threads", THREADS)
    check("RAN 300 LATER 1000 TRACES 3" in text, "threads: every thread ran its op, the program traced 3 times",
          text[-200:])
    db = common(out, "threads", ["threads that got no buffer", "256 threads"])
    storm = agtest.q1(db, "SELECT count(DISTINCT e.tid) FROM eager_ops e JOIN strings s ON s.id = e.op_id"
                          " WHERE s.text = 'AddV2'")
    check(storm <= 256, "threads: at most 256 of the storm's threads recorded", storm, 256)
    adds = agtest.q1(db, "SELECT count(*) FROM eager_ops e JOIN strings s ON s.id = e.op_id WHERE s.text = 'AddV2'")
    check(0 < adds < 300, "threads: the threads with a buffer recorded their op, the others none", adds)
    muls = agtest.q1(db, "SELECT count(*) FROM eager_ops e JOIN strings s ON s.id = e.op_id WHERE s.text = 'Mul'")
    check_eq(muls, 1000, "threads: after the storm every short-lived thread recorded its op (slots given back)")
    traces = agtest.q1(db, "SELECT count(*) FROM traces t JOIN functions f ON f.id = t.function_id "
                           "JOIN strings n ON n.id = f.name_id WHERE n.text = 'after'")
    check_eq(traces, 3, "threads: the traces after the storm are all recorded (tracing count)")
    db.close()


def forks(d):
    out, text = run(d, "forks", FORKS)
    check("FORKS 1100" in text, "forks: the program forked 1,100 times", text[-200:])
    db = common(out, "forks", ["processes past the first 1024"])
    n = agtest.q1(db, "SELECT count(*) FROM processes")
    check(n == 1024, "forks: the first 1,024 processes recorded", n, 1024)
    refused = int(agtest.meta(db)["incomplete"].split("processes past")[0].split()[-1])
    check_eq(refused, 1101 - 1024, "forks: the note counts the processes not read (1,101 in all)")
    db.close()


def main():
    agtest.need_agprof()
    d = agtest.tmpdir()
    {"threads": threads, "forks": forks}[sys.argv[1]](d)
    agtest.finish("hostile-" + sys.argv[1])


if __name__ == "__main__":
    main()
