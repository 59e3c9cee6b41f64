"""Helpers for the analyzer tests (plain Python, no pytest).

Environment (tests/meson.build): AGPROF, AGPROF_SOURCE_ROOT, AGPROF_RULES_DIR;
the samples run with sys.executable, the Python of meson option test_python.
A test collects failures with check() and ends with finish().
"""
import ast
import json
import os
import re
import subprocess
import sys
import tempfile

AGPROF = os.environ.get("AGPROF")
SOURCE_ROOT = os.environ.get("AGPROF_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
SAMPLES = os.path.join(SOURCE_ROOT, "samples")
_failures = []
_count = [0]


def check(cond, what):
    _count[0] += 1
    if not cond:
        _failures.append(what)
    return bool(cond)


def finish(name):
    if _failures:
        print("FAIL %s: %d of %d checks failed:" % (name, len(_failures), _count[0]))
        for f in _failures:
            print("  - " + f)
        sys.exit(1)
    print("ok %s: %d checks" % (name, _count[0]))
    sys.exit(0)


def die(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def need_agprof():
    if not AGPROF or not os.access(AGPROF, os.X_OK):
        die("$AGPROF is not an executable agprof (got %r)" % AGPROF)


def agprof(*args, timeout=300):
    """Run agprof ARGS; return (exit status, stdout text, stderr text)."""
    p = subprocess.run([AGPROF] + [str(a) for a in args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def record(sample_name, tmp=None):
    """Record samples/<name>.py with `agprof run`; the path of the recording.

    A sample that cannot be recorded fails the test: these tests are about
    real TensorFlow runs and never skip.
    """
    need_agprof()
    d = tmp or tempfile.mkdtemp(prefix="agprof-an-")
    out = os.path.join(d, sample_name + ".agprof")
    p = subprocess.run([AGPROF, "run", "-o", out, "--", sys.executable,
                        os.path.join(SAMPLES, sample_name + ".py")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600, cwd=SOURCE_ROOT)
    if p.returncode != 0 or not os.path.exists(out):
        sys.stdout.write(p.stderr.decode("utf-8", "replace")[-3000:])
        die("agprof run on %s.py exited %d and wrote %s" % (sample_name, p.returncode,
                                                             out if os.path.exists(out) else "nothing"))
    return out


def report_json(recording, *extra):
    rc, out, err = agprof("report", "--format", "json", *extra, recording)
    if rc != 0:
        die("agprof report --format json exited %d: %s" % (rc, err.strip()))
    try:
        return json.loads(out)
    except ValueError as e:
        die("agprof report --format json is not JSON (%s): %s" % (e, out[:300]))


def markers(sample_name):
    """{marker: [line numbers]} of the `# agprof: <marker>` comments."""
    found = {}
    with open(os.path.join(SAMPLES, sample_name + ".py")) as fh:
        for no, text in enumerate(fh, 1):
            m = re.search(r"#\s*agprof:\s*([\w-]+)", text)
            if m:
                found.setdefault(m.group(1), []).append(no)
    return found


def enclosing_defs(sample_name, line):
    """Lines of the defs (and their decorators) of the functions enclosing line."""
    with open(os.path.join(SAMPLES, sample_name + ".py")) as fh:
        tree = ast.parse(fh.read())
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.lineno <= line <= (node.end_lineno or node.lineno):
            lines.add(node.lineno)
            lines.update(d.lineno for d in node.decorator_list)
    return lines
