"""Helpers of the analyzer tests: samples recorded once, read through
`agprof report`.  The common part (checks, agprof, temporary directories,
samples) is tests/agtestlib.py; AGPROF_RULES_DIR is set too.
"""
import ast
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from agtestlib import (AGPROF, SOURCE_ROOT, SAMPLES, agprof, check, die, finish,  # noqa: E402,F401
                       need_agprof, tmpdir)
import agtestlib  # noqa: E402


def record(sample_name, tmp=None):
    """Record samples/<name>.py with `agprof run`; the path of the recording.

    A sample that cannot be recorded fails the test: these tests are about
    real TensorFlow runs and never skip.
    """
    need_agprof()
    d = tmp or tmpdir("agprof-an-")
    out = os.path.join(d, sample_name + ".agprof")
    rc, err = agtestlib.shared_sample_run(sample_name + ".py", out)
    if rc != 0 or not os.path.exists(out):
        sys.stdout.write(err[-3000:])
        die("agprof run on %s.py exited %d and wrote %s" % (sample_name, rc, out if os.path.exists(out) else "nothing"))
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
    return agtestlib.marker_lines(sample_name + ".py")


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
