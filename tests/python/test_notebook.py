"""%%agprof in a real Jupyter kernel (issue 39), run by nbclient.

A notebook (nbformat) with `%load_ext agprof`, a cell defining a
tf.function, and a `%%agprof` cell calling it with Python scalars (it
retraces at each new value) is executed by nbclient.NotebookClient in an
ipykernel kernel whose kernelspec (in a JUPYTER_PATH inside the test's
directory, never the user's) runs this Python.  The %%agprof cell's outputs
must hold the HTML report (text/html) and the finding's location as IPython
names the cell (`In [3], line 5`), with the corrected cell; then, in the
same kernel, the function is defined again and the corrected cell run: its
tracing count (TensorFlow's experimental_get_tracing_count()) is 1 and it
prints the same result.
"""
import importlib.util
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
import agtest  # noqa: E402

SETUP = "import sys\n%load_ext agprof\nimport tensorflow as tf\nprint(sys.executable)"
# a step whose graph takes a while to trace: each retrace clearly costs more than the tf.constant the edit adds
DEFINE = """@tf.function
def step(x, n):
    for _ in range(12):
        x = tf.tanh(x * n + 0.5)
    return tf.reduce_sum(x)
"""
# line 5 of this cell is the call that retraces
RECORD = """%%agprof -f -o {out}
x = tf.constant([0.1, 0.2, 0.3])
total = 0.0
for n in range(8):
    total += float(step(x, n))
print("total", total)
count = step.experimental_get_tracing_count()
print("traces", count)
"""


def kernelspec(tmp):
    """A python3 kernelspec running this Python, in tmp (JUPYTER_PATH): not the user's, not PATH's python."""
    kdir = os.path.join(tmp, "jupyter", "kernels", "python3")
    os.makedirs(kdir)
    with open(os.path.join(kdir, "kernel.json"), "w") as f:
        json.dump({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                   "display_name": "Python 3 (agprof test)", "language": "python"}, f)
    for var, sub in (("JUPYTER_PATH", "jupyter"), ("JUPYTER_DATA_DIR", "data"), ("JUPYTER_RUNTIME_DIR", "runtime"),
                     ("JUPYTER_CONFIG_DIR", "config"), ("IPYTHONDIR", "ipython")):
        os.environ[var] = os.path.join(tmp, sub)
    os.environ["JUPYTER_PLATFORM_DIRS"] = "1"


def texts(cell, kind):
    """The cell's stdout (kind "text") or its text/html outputs (kind "html")."""
    if kind == "text":
        return "".join(o.get("text", "") for o in cell.outputs
                       if o.output_type == "stream" and o.get("name") == "stdout")
    return [o.data["text/html"] for o in cell.outputs if "data" in o and "text/html" in o.data]


def block(code):
    """code as the text report indents it under "corrected cell:"."""
    return "\n".join("        " + ln for ln in code.splitlines())


def line_of(text, prefix):
    return next((ln for ln in text.splitlines() if ln.startswith(prefix)), None)


def main():
    for mod in ("nbclient", "nbformat", "ipykernel"):
        if importlib.util.find_spec(mod) is None:
            print("SKIP: %s has no %s (./setup installs it)" % (sys.executable, mod))
            sys.exit(77)
    import nbformat
    from nbclient import NotebookClient

    tmp = agtest.agtestlib.tmpdir("agprof-nb-")
    kernelspec(tmp)
    out = os.path.join(tmp, "cell.agprof")
    v4 = nbformat.v4
    nb = v4.new_notebook(cells=[v4.new_code_cell(SETUP), v4.new_code_cell(DEFINE),
                                v4.new_code_cell(RECORD.format(out=out))])
    client = NotebookClient(nb, kernel_name="python3", timeout=240, resources={"metadata": {"path": tmp}})
    with client.setup_kernel():
        for i, cell in enumerate(nb.cells):
            client.execute_cell(cell, i)
        agtest.check_eq(texts(nb.cells[0], "text").strip(), sys.executable, "the kernel runs this Python")
        text, pages = texts(nb.cells[2], "text"), texts(nb.cells[2], "html")
        agtest.check_eq(nb.cells[2].execution_count, 3, "the %%agprof cell is In [3]")
        agtest.check(line_of(text, "traces") == "traces 8", "the cell ran, retracing at each value", text[-3000:])
        agtest.check("Findings" in text and "In [3], line 5" in text and "corrected cell:" in text,
                     "the report below the cell names the cell and line, with the corrected cell", text[-3000:])
        agtest.check(len(pages) == 1 and "srcdoc=" in pages[0] and "In [3], line 5" in pages[0]
                     and "corrected cell:" in pages[0], "the HTML report among the outputs, locations by cell",
                     [p[:300] for p in pages])
        r = subprocess.run([agtest.AGPROF, "report", "--format", "json", out], stdout=subprocess.PIPE, text=True)
        report = json.loads(r.stdout)
        fix = next((f["fix"] for f in report["findings"] if f["rule"] == "retracing" and f["fix"]), None)
        agtest.check(fix and fix["cell"] == "In [3]" and fix["cell_line"] == 5 and "ipykernel_" in fix["file"],
                     "the edit is the cell's (JSON fix.cell, fix.cell_line)", fix)
        corrected = (fix or {}).get("cell_after") or ""
        agtest.check(corrected.startswith("%%agprof -f -o ") and corrected.count("\n") == RECORD.count("\n") - 1
                     and "tf.constant(n" in corrected and block(corrected) in text,
                     "the corrected cell is the whole cell, as the report shows it", corrected)
        cells = {c["label"]: c for c in report["cells"]}
        agtest.check(cells.get("In [3]", {}).get("first_line") == 2 and "In [2]" in cells,
                     "JSON cells: the %%agprof body from line 2, the defining cell", report["cells"])
        # the edit checked against the program: a fresh step, then the corrected cell, in the same kernel
        for code in (DEFINE, corrected):
            nb.cells.append(v4.new_code_cell(code))
            client.execute_cell(nb.cells[-1], len(nb.cells) - 1)
        fixed = texts(nb.cells[-1], "text")
        agtest.check_eq(line_of(fixed, "traces"), "traces 1", "the corrected cell traces step once")
        agtest.check_eq(line_of(fixed, "total"), line_of(text, "total"), "the corrected cell prints the same total")
        agtest.check("retracing" not in fixed.split("Findings", 1)[-1], "no retracing finding left", fixed[-2000:])


if __name__ == "__main__":
    agtest.need_agprof()
    main()
    agtest.finish("python-notebook")
