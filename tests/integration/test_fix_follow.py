"""Advice to decorate a function with @tf.function follows the calls it makes.

Usage: test_fix_follow.py PROGRAM   (a file of tests/integration/fix_programs/)

The program's function does its TensorFlow work eagerly and holds nothing a
trace cannot run itself, but calls a function of the user's own (same file,
another user file, a method on self or on an instance of a class of the
user's, a def nested beside it) that, maybe a call further down,
calls .numpy() or draws NumPy randomness.  Its header states, before agprof
runs, `# expect: names TEXT` (the eager-hotspot finding's advice names the
chain of calls: each TEXT in it), `# expect: decorate FUNC` (the function
the old advice decorated), `# expect: with FILE` (another file of the
program) and what following that old advice does: `# expect:
decorated-fails TEXT` (the program with @tf.function on FUNC exits non-zero,
TEXT on stderr) or `# expect: decorated-differs` (it prints other values).
The test:
- runs the program with @tf.function above FUNC's def, plainly: the oracle
  that the old advice breaks it (TensorFlow's own behaviour, not agprof's);
- records the program and reads its eager-hotspot finding: its advice
  names each TEXT, does not tell to decorate FUNC, and holds no edit that
  decorates it; `agprof fix` writes no @tf.function above FUNC's def.
"""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fix_programs")


def copy_program(d, program, want):
    os.makedirs(d)
    for name in [program] + want.get("with", []):
        shutil.copy(os.path.join(HERE, name), d)


def run_plain(d, program):
    p = subprocess.run([agtest.PYTHON, program], cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=240)
    return p.returncode, p.stdout.decode(), p.stderr.decode("utf-8", "replace")


def decorated(d, program, func):
    """The program with @tf.function above func's def, as the old advice said."""
    path = os.path.join(d, program)
    with open(path) as fh:
        text = fh.read()
    m = re.search(r"^( *)def %s\(" % re.escape(func), text, re.M)
    check(m is not None, "the def of %s in %s" % (func, program))
    with open(path, "w") as fh:
        fh.write(text[:m.start()] + m.group(1) + "@tf.function\n" + text[m.start():])


def check_old_advice_breaks(top, program, want, func):
    plain, dec = os.path.join(top, "plain"), os.path.join(top, "decorated")
    copy_program(plain, program, want)
    copy_program(dec, program, want)
    decorated(dec, program, func)
    rc0, out0, err0 = run_plain(plain, program)
    check_eq(rc0, 0, "the program runs as it is (%s)" % err0[-500:])
    rc1, out1, err1 = run_plain(dec, program)
    if "decorated-fails" in want:
        check(rc1 != 0 and want["decorated-fails"][0] in err1,
              "with @tf.function on %s it fails: %s" % (func, want["decorated-fails"][0]), (rc1, err1[-500:]))
    else:
        check(rc1 == 0 and out1 != out0, "with @tf.function on %s it prints other values" % func,
              (rc1, out0, out1, err1[-300:]))


def main():
    agtest.need_agprof()
    program = sys.argv[1]
    want = agtest.expectations(os.path.join(HERE, program))
    func = want["decorate"][0]
    top = agtest.tmpdir()
    check_old_advice_breaks(top, program, want, func)
    d = os.path.join(top, "rec")
    copy_program(d, program, want)
    rec = os.path.join(d, "run.agprof")
    p = subprocess.run([agtest.AGPROF, "run", "-q", "-o", rec, "--", agtest.PYTHON, program], cwd=d,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=240)
    check_eq(p.returncode, 0, "%s under agprof (%s)" % (program, p.stderr.decode("utf-8", "replace")[-500:]))
    rc, out, err = agtest.agprof_cmd("report", "--format", "json", rec)
    check_eq(rc, 0, "agprof report --format json exit status (%s)" % err.strip())
    found = [f for f in json.loads(out)["findings"] if f["rule"] == "eager-hotspot"] if rc == 0 else []
    check_eq(len(found), 1, "eager-hotspot findings of %s" % program)
    for f in found:
        advice = (f["recommendation"] or "") + " " + (f["no_edit"] or "")
        for text in want["names"]:
            check(text in advice, "the advice names: " + text, advice)
        check("decorate %s" % func not in advice.lower(), "the advice does not decorate " + func, advice)
        check(not f["fix"] or "@tf.function" not in f["fix"]["after"], "no edit decorates " + func, f["fix"])
    rc, diff, err = agtest.agprof_cmd("fix", rec)
    check(not re.search(r"^\+ *@tf\.function\n\+? *def %s\(" % re.escape(func), diff, re.M),
          "agprof fix writes no @tf.function above %s" % func, diff[:800])
    agtest.finish("fix-follow-" + program)


if __name__ == "__main__":
    main()
