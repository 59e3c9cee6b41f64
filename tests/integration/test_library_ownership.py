"""A library is a library wherever it is installed (issue 45): ownership by
package, not by site-packages in the path.

samples/library_retrace.py calls minilib (samples/fakelib/.../minilib, a
new tf.function per minimize() call) at the line marked
`# agprof: library-retrace`.  Copied into a program directory of its own
(prog/), it is recorded with real TensorFlow under `agprof run`, with
minilib found in each of these places; expected, written before the first
run:

- (a) PYTHONPATH=<checkout>, a plain source checkout outside prog/;
- (b) an editable install, by real pip (--no-index --no-build-isolation:
  setuptools' PEP 660 backend, offline) of a project outside prog/, into a
  throwaway venv that sees the test's TensorFlow through a .pth file (the
  test's venv is not the system's, so --system-site-packages would not);
- (c) vendored: prog/third_party/minilib, put on sys.path by the program
  (its sys.path.insert line pointed there);
  each: the retracing/new-function-object finding's location is the user's
  marked line in prog/, its library_location minilib's `# minilib: call`
  line in that copy, and `agprof check --max-traces 1` passes (exit 0: the
  5 traces of step are minilib's, not the user's);
- negatives, minilib then being the user's own code: (d) PYTHONPATH=. with
  minilib in prog/, (e) prog/ being a project installed with pip install -e
  . (minilib its package): the location is minilib's call line, no
  library_location, and `check --max-traces 1` fails (exit 1).
"""
import json
import os
import shutil
import subprocess
import sys
import sysconfig

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq  # noqa: E402

SAMPLE = "library_retrace.py"
MINILIB = os.path.join(agtest.SAMPLES, "fakelib", "site-packages", "minilib")
PYPROJECT = """[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "%s"
version = "1.0"

[tool.setuptools]
packages = ["minilib"]
"""


def marked(path, tag):
    with open(path) as fh:
        return [no for no, text in enumerate(fh, 1) if ("# " + tag) in text][0]


def program(d, name, vendored=False):
    """prog/ with the sample and its oracle; vendored: its sys.path line names third_party/."""
    prog = os.path.join(d, name)
    os.makedirs(prog)
    shutil.copy(agtest.sample("oracle.py"), prog)
    with open(agtest.sample(SAMPLE)) as fh:
        text = fh.read()
    if vendored:
        old = '"fakelib", "site-packages"'
        check(old in text, "the sample's sys.path line is where the test expects it")
        text = text.replace(old, '"third_party"')
        shutil.copytree(MINILIB, os.path.join(prog, "third_party", "minilib"))
    with open(os.path.join(prog, SAMPLE), "w") as fh:
        fh.write(text)
    return prog


def loc(d):
    return (os.path.realpath(d["file"]), d["line"]) if d else None


def record_and_check(d, name, prog, minilib_dir, library, python=None, env_extra=None):
    """Record prog/SAMPLE; check the finding's locations and check --max-traces 1."""
    out = os.path.join(d, name + ".agprof")
    env = dict(os.environ, **(env_extra or {}))
    p = subprocess.run([agtest.AGPROF, "run", "-q", "-o", out, "--", python or agtest.PYTHON, SAMPLE], env=env,
                       cwd=prog, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=240)
    check_eq(p.returncode, 0, "%s: agprof run" % name)
    if p.returncode:
        sys.stdout.write(p.stderr.decode("utf-8", "replace")[-3000:])
        return
    user = (os.path.realpath(os.path.join(prog, SAMPLE)), agtest.marker_lines(SAMPLE)["library-retrace"][0])
    optimizer = os.path.join(minilib_dir, "optimizer.py")
    lib = (os.path.realpath(optimizer), marked(optimizer, "minilib: call"))
    rc, text, _ = agtest.agprof_cmd("report", "--format", "json", out)
    check_eq(rc, 0, "%s: agprof report" % name)
    found = [f for f in json.loads(text).get("findings", [])
             if f["rule"] == "retracing" and f.get("cause") == "new-function-object"] if rc == 0 else []
    check_eq(len(found), 1, "%s: one retracing/new-function-object finding" % name)
    want = (user, lib) if library else (lib, None)
    for f in found:
        check_eq((loc(f.get("location")), loc(f.get("library_location"))), want,
                 "%s: location and library_location" % name)
    rc, text, _ = agtest.agprof_cmd("check", out, "--max-traces", "1")
    check_eq(rc, 0 if library else 1, "%s: check --max-traces 1 (%s)" % (name, text.strip()[-300:]))


def make_venv(d):
    """A throwaway venv whose site-packages sees the test's (TensorFlow, pip, setuptools) through a .pth."""
    venv = os.path.join(d, "venv")
    subprocess.run([agtest.PYTHON, "-m", "venv", "--without-pip", "--system-site-packages", venv], check=True,
                   timeout=120)
    python = os.path.join(venv, "bin", "python")
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], check=True,
                          stdout=subprocess.PIPE, timeout=60).stdout.decode().strip()
    with open(os.path.join(site, "agtest_parent_venv.pth"), "w") as fh:
        fh.write(sysconfig.get_paths()["purelib"] + "\n")
    return python


def pip_editable(python, project):
    p = subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                        "-e", project], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=240)
    check_eq(p.returncode, 0, "pip install -e %s (%s)" % (project, p.stdout.decode("utf-8", "replace")[-2000:]))
    return p.returncode == 0


def project(path, name):
    """A setuptools project at path whose package is a copy of minilib."""
    shutil.copytree(MINILIB, os.path.join(path, "minilib"))
    with open(os.path.join(path, "pyproject.toml"), "w") as fh:
        fh.write(PYPROJECT % name)


def main():
    agtest.need_agprof()
    d = agtest.tmpdir()

    # (a) a source checkout on PYTHONPATH, outside the program's tree
    checkout = os.path.join(d, "checkout")
    shutil.copytree(MINILIB, os.path.join(checkout, "minilib"))
    record_and_check(d, "pythonpath", program(d, "prog-a"), os.path.join(checkout, "minilib"), True,
                     env_extra={"PYTHONPATH": checkout})

    # (c) vendored into the program's tree
    prog = program(d, "prog-c", vendored=True)
    record_and_check(d, "vendored", prog, os.path.join(prog, "third_party", "minilib"), True)

    # (d) PYTHONPATH=. : minilib in the program's own directory is the user's
    prog = program(d, "prog-d")
    shutil.copytree(MINILIB, os.path.join(prog, "minilib"))
    record_and_check(d, "pythonpath-dot", prog, os.path.join(prog, "minilib"), False, env_extra={"PYTHONPATH": "."})

    # (b) an editable install of a library; (e) of the program's own project
    python = make_venv(d)
    src = os.path.join(d, "minilib-src")
    project(src, "minilib")
    if pip_editable(python, src):
        record_and_check(d, "editable", program(d, "prog-b"), os.path.join(src, "minilib"), True, python=python)
    prog = program(d, "prog-e")
    project(prog, "prog-e")
    if pip_editable(python, prog):
        record_and_check(d, "editable-own", prog, os.path.join(prog, "minilib"), False, python=python)
    agtest.finish("library_ownership")


if __name__ == "__main__":
    main()
