"""The IPython extension (issue 12), in IPython's own InteractiveShell.

`%load_ext agprof`, then `%%agprof` on cells that define and call a
retracing tf.function: the report is shown below the cell (findings first),
the trace count equals TensorFlow's experimental_get_tracing_count(), a
second recorded cell works, the HTML page is displayed too (rich display), `%agprof_report` shows the last one again,
`%%agprof --check` reports the crossed threshold, a bad option is a usage
error, and a cell that raises still leaves its recording.  Locations read as
IPython names the cell (`In [2], line 6`) and the edit comes as the
corrected cell, which, run in the shell, traces step once (issue 39).
A cell's advice is placed with the code facts, as a file's (issue 45): a
function of one cell calling, in the same cell, one that calls .numpy() is
not offered @tf.function (it would fail: TensorFlow says so here), and the
advice names both cells' lines.
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
import agtest  # noqa: E402

TRAIN = """%%agprof -f -o {out}
@tf.function
def step(x):
    return tf.reduce_sum(x * 2.0)
for n in range(1, 6):
    step(tf.zeros([n]))
count = step.experimental_get_tracing_count()
"""


RECORD_BLOCK = """import agprof
@tf.function
def scale(x, k):
    for _ in range(12):  # a graph that takes a while to trace: a retrace costs more than the edit's tf.constant
        x = tf.tanh(x * k + 0.5)
    return tf.reduce_sum(x)
with agprof.record({out!r}, force=True):
    total = sum(float(scale(tf.ones([2]), k)) for k in range(5))
"""


HELPERS = """import numpy as np
def noisy(y):
    return y.numpy() + np.random.normal(scale=0.01, size=3)
def busy(x):
    for _ in range(12):
        x = tf.sqrt(x * x + 1.0) * 0.9
    return noisy(x)
"""
BUSY = """%%agprof -f -o {out}
total = sum(float(np.sum(busy(tf.constant([float(i % 7), 1.0, 2.0])))) for i in range(150))
"""


def traces(path, name):
    r = subprocess.run([agtest.AGPROF, "report", "--format", "json", path], stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:
        return None
    return [f["traces"] for f in json.loads(r.stdout)["functions"] if f["name"] == name]


def cell_fix(path):
    """The fix of the retracing finding of path's report (JSON), or None."""
    r = subprocess.run([agtest.AGPROF, "report", "--format", "json", path], stdout=subprocess.PIPE, text=True)
    fixes = [f["fix"] for f in json.loads(r.stdout)["findings"] if f["rule"] == "retracing" and f["fix"]]
    return fixes[0] if r.returncode == 0 and fixes else None


def main():
    if importlib.util.find_spec("IPython") is None:
        print("SKIP: %s has no IPython (./setup installs it)" % sys.executable)
        sys.exit(77)
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    tmp = agtest.agtestlib.tmpdir("agprof-ipy-")
    tempfile.tempdir = tmp  # the extension's own cell recordings (agprof-cells-*) are removed with it
    shell = InteractiveShell.instance()

    rich = []

    def cell(code):
        with capture_output() as cap:
            res = shell.run_cell(code, store_history=True)  # as IPython's shell runs what is typed
        rich[:] = [o.data for o in cap.outputs]
        return res, cap.stdout + cap.stderr

    res, out = cell("%load_ext agprof\nimport tensorflow as tf")
    agtest.check(res.success, "%load_ext agprof: " + out)

    first = os.path.join(tmp, "first.agprof")
    res, out = cell(TRAIN.format(out=first))
    agtest.check(res.success, "a %%agprof cell runs: " + out[-2000:])
    count = shell.user_ns.get("count")
    agtest.check_eq(count, 5, "the cell ran (tracing count of step)")
    agtest.check_eq(traces(first, "step"), [count], "traces of step in the cell's recording")
    f_at, r_at = out.find("Findings"), out.find("retracing")
    agtest.check(0 <= f_at < r_at and "step" in out[f_at:], "the report below the cell, findings first", out[-3000:])
    corrected = cell_fix(first)
    agtest.check("In [2], line 6" in out and "corrected cell:" in out and corrected
                 and corrected["cell"] == "In [2]" and corrected["cell_after"].startswith("%%agprof -f -o ")
                 and "input_signature" in corrected["cell_after"],
                 "the location names the cell (In [2], line 6) and the edit is the corrected cell", out[-3000:])
    pages = [d["text/html"] for d in rich if "text/html" in d]
    agtest.check(len(pages) == 1 and "srcdoc=" in pages[0] and "id=&quot;findings&quot;" in pages[0]
                 and "step" in pages[0], "the HTML report displayed too (IPython's rich display)", rich)

    second = os.path.join(tmp, "second.agprof")
    res, out = cell(TRAIN.format(out=second).replace("range(1, 6)", "range(6, 9)"))
    agtest.check(res.success and os.path.exists(second), "a second %%agprof cell: " + out[-2000:])
    agtest.check_eq(traces(second, "step"), [3], "the second cell records its own traces only")

    res, out = cell("%agprof_report")
    agtest.check(res.success and "Findings" in out and second in out, "%agprof_report shows the last one again", out[-2000:])

    res, out = cell("%%agprof --check --max-traces 2\nfor n in range(1, 5):\n    step(tf.zeros([n + 20]))\n")
    agtest.check(res.success and "threshold crossed" in out and "step" in out,
                 "%%agprof --check --max-traces 2", out[-2000:])

    res, out = cell("%%agprof --bogus\n1 + 1\n")
    agtest.check(not res.success and "--bogus" in out, "%%agprof with a bad option is a usage error", out[-2000:])

    raised = os.path.join(tmp, "raised.agprof")
    res, out = cell("%%%%agprof -o %s\nstep(tf.zeros([40]))\nraise ValueError('inside the cell')\n" % raised)
    agtest.check("inside the cell" in out and os.path.exists(raised), "a cell that raises keeps its recording", out[-2000:])
    res, out = cell("after = float(step(tf.ones([2])))")
    agtest.check(res.success and shell.user_ns.get("after") == 4.0, "the shell goes on", out[-2000:])

    # agprof.record() in a cell, without the magic: its locations name the cell too
    block = os.path.join(tmp, "block.agprof")
    res, out = cell(RECORD_BLOCK.format(out=block))
    number = shell.execution_count - 1
    fix = cell_fix(block) if res.success else None
    agtest.check(fix and fix["cell"] == "In [%d]" % number and fix["cell_line"] == 8,
                 "agprof.record() in a cell: the edit is the cell's (In [%d], line 8)" % number, (fix, out[-2000:]))

    # the edit checked against the program: the corrected cell defines step again, with its signature
    res, out = cell(corrected["cell_after"] if corrected else "")
    agtest.check(res.success and shell.user_ns.get("count") == 1, "the corrected cell traces step once",
                 out[-2000:])
    check_follow_in_cells(cell, shell, tmp)


def check_follow_in_cells(cell, shell, tmp):
    """busy() in one cell calls noisy(), which calls .numpy(): the advice names both, and no decorator."""
    number = shell.execution_count
    res, out = cell(HELPERS)
    agtest.check(res.success, "the helpers' cell runs: " + out[-1000:])
    res, out = cell("tf.function(busy)(tf.ones([3]))")
    agtest.check(not res.success and "numpy" in out, "busy decorated with @tf.function fails (TensorFlow)",
                 out[-800:])
    rec = os.path.join(tmp, "busy.agprof")
    res, out = cell(BUSY.format(out=rec))
    agtest.check(res.success, "the %%agprof cell calling busy runs: " + out[-1000:])
    r = subprocess.run([agtest.AGPROF, "report", "--format", "json", rec], stdout=subprocess.PIPE, text=True)
    found = [f for f in json.loads(r.stdout)["findings"] if f["rule"] == "eager-hotspot"] if r.returncode == 0 else []
    agtest.check_eq(len(found), 1, "eager-hotspot findings of the busy cell")
    want = "busy calls noisy() at In [%d]:7, which calls y.numpy() at In [%d]:3" % (number, number)
    for f in found:
        agtest.check(want in (f["recommendation"] or ""), "the advice names the calls by cell: " + want,
                     f["recommendation"])
        agtest.check("decorate busy" not in (f["recommendation"] or "").lower() and not f["fix"],
                     "busy is not offered @tf.function", (f["recommendation"], f["fix"]))


if __name__ == "__main__":
    agtest.need_agprof()
    main()
    agtest.finish("python-ipython")
