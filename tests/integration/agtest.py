"""Helpers of the integration tests: recordings made with `agprof run`,
read back with sqlite3.  The common part (checks, agprof, temporary
directories, samples) is tests/agtestlib.py.
"""
import json
import re
import os
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from agtestlib import (AGPROF, SOURCE_ROOT, SAMPLES, PYTHON, check, check_eq, fail,  # noqa: E402,F401
                       finish, marker_lines, marker_lines_of, sample)
import agtestlib  # noqa: E402


def need_agprof():
    agtestlib.need_agprof(tensorflow=True)


def tmpdir():
    return agtestlib.tmpdir("agprof-it-")


def run_agprof(out, argv, env_extra=None, timeout=240, stdin_data=None, cwd=None, agprof_args=()):
    """Run `agprof run -o out [agprof_args] -- argv...`; return CompletedProcess (bytes)."""
    env = dict(os.environ)
    if env_extra:
        env.update(env_extra)
    cmd = [AGPROF, "run", "-o", out] + list(agprof_args) + ["--"] + list(argv)
    p = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, cwd=cwd or SOURCE_ROOT)
    try:
        stdout, stderr = p.communicate(stdin_data if stdin_data is not None else b"",
                                       timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise
    check_shm_cleaned(p.pid)
    return subprocess.CompletedProcess(cmd, p.returncode, stdout, stderr)


def check_shm_cleaned(agprof_pid):
    """agprof's shared-memory directory (/dev/shm/agprof-<uid>/<pid>-*) must be
    gone once agprof has exited, whatever happened to the workload."""
    import glob
    import shutil
    left = glob.glob("/dev/shm/agprof-%d/%d-*" % (os.geteuid(), agprof_pid))
    check(not left, "shared-memory directory left behind by agprof", left, [])
    for path in left:  # made by the agprof this test started
        shutil.rmtree(path, ignore_errors=True)


last_recording = None  # path of the recording run_sample_recorded() made


def agprof_cmd(*args, timeout=240):
    """Run `agprof ARGS...` without colours; return (exit status, stdout, stderr) as text."""
    return agtestlib.agprof(*args, timeout=timeout, env_extra={"NO_COLOR": "1"})


def run_sample_recorded(sample_name, args=(), timeout=240, agprof_args=()):
    """Run a sample under agprof with AGPROF_ORACLE; return (proc, db, oracle)."""
    global last_recording
    d = tmpdir()
    out = os.path.join(d, sample_name.replace(".py", "") + ".agprof")
    last_recording = out
    oracle_path = os.path.join(d, "oracle.json")
    proc = run_agprof(out, [PYTHON, sample(sample_name)] + list(args),
                      env_extra={"AGPROF_ORACLE": oracle_path}, timeout=timeout, agprof_args=agprof_args)
    sys.stdout.write(proc.stdout.decode("utf-8", "replace"))
    if proc.returncode != 0:
        sys.stdout.write(proc.stderr.decode("utf-8", "replace")[-4000:])
    if not os.path.exists(oracle_path):
        print("FAIL: the sample wrote no oracle (exit status %d)" % proc.returncode)
        sys.exit(1)
    with open(oracle_path) as fh:
        oracle = json.load(fh)
    if not os.path.exists(out):
        print("FAIL: agprof wrote no recording at %s (exit status %d)" % (out, proc.returncode))
        sys.exit(1)
    return proc, open_recording(out), oracle


def open_recording(path):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    db.row_factory = sqlite3.Row
    return db


def facts_of(stdout):
    """The JSON of a sample's "facts {...}" line (its own counts and timers), or None."""
    for line in stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("facts "):
            return json.loads(line[len("facts "):])
    return None


def q1(db, sql, *args):
    row = db.execute(sql, args).fetchone()
    return None if row is None else row[0]


def meta(db):
    return {r["key"]: r["value"] for r in db.execute("SELECT key, value FROM meta")}


def check_recording_header(db):
    check_eq(q1(db, "PRAGMA user_version"), 9, "PRAGMA user_version")
    check_eq(q1(db, "PRAGMA application_id"), 1634168946, "PRAGMA application_id")
    check_eq(q1(db, "PRAGMA integrity_check"), "ok", "PRAGMA integrity_check")


def def_lines(file, first_line):
    """Lines that may stand for a function's definition: its first decorator
    (co_firstlineno) and the `def` line below it."""
    lines = {first_line}
    try:
        with open(file) as fh:
            text = fh.read().splitlines()
        for no in range(first_line, min(len(text), first_line + 20) + 1):
            if re.match(r"\s*(async\s+)?def\s", text[no - 1]):
                lines.add(no)
                break
    except OSError:
        pass
    return lines


def same_file(a, b):
    if a is None or b is None:
        return False
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except OSError:
        return a == b


def trials_from_argv(suite_seed=40):
    """--trials N [--seed S] (a random-trial run outside the suite): (N, random.Random(S), S defaulting
    to 1); without them, the suite's seeded plan: (None, random.Random(suite_seed))."""
    import random
    if "--trials" not in sys.argv:
        return None, random.Random(suite_seed)
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 1
    return int(sys.argv[sys.argv.index("--trials") + 1]), random.Random(seed)
