"""The one helper module of agprof's Python tests (plain Python, no pytest).

tests/integration/agtest.py and tests/analyzer/agcheck.py build on it; a
test imports one of those.  Environment (set by the tests' meson.build):
AGPROF (the agprof binary), AGPROF_SOURCE_ROOT; the samples run with
sys.executable, the Python of the meson option test_python (TensorFlow).

A test collects failures with check() and ends with finish(), which prints
every difference and exits 1 if there was any, so that one run shows all
that differs, not only the first mismatch.  Temporary directories made with
tmpdir() are removed when the test exits (AGPROF_KEEP_TMP=1 keeps them).
"""
import atexit
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile

AGPROF = os.environ.get("AGPROF")
SOURCE_ROOT = os.environ.get("AGPROF_SOURCE_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SAMPLES = os.path.join(SOURCE_ROOT, "samples")
PYTHON = sys.executable

_failures = []
_checks = [0]
_tmpdirs = []


def check(cond, what, got=None, expected=None):
    """Record one comparison.  `what` says what was compared."""
    _checks[0] += 1
    if cond:
        return True
    if got is None and expected is None:
        _failures.append(what)
    else:
        _failures.append("%s: recording has %r, expected %r" % (what, got, expected))
    return False


def check_eq(got, expected, what):
    return check(got == expected, what, got, expected)


def fail(what):
    _failures.append(what)


def finish(name):
    if _failures:
        print("FAIL %s: %d of %d checks differ:" % (name, len(_failures), _checks[0]))
        for f in _failures:
            print("  - " + f)
        sys.exit(1)
    print("ok %s: %d checks" % (name, _checks[0]))
    sys.exit(0)


def die(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def need_agprof(tensorflow=False):
    """Fail unless $AGPROF is runnable (and, if asked, this Python has TensorFlow)."""
    if not AGPROF or not os.access(AGPROF, os.X_OK):
        die("$AGPROF is not set to an executable agprof (got %r)" % AGPROF)
    if tensorflow:
        import importlib.util
        if importlib.util.find_spec("tensorflow") is None:
            die("%s has no tensorflow; configure the build with "
                "-Dtest_python=/path/to/venv/bin/python (the venv with tensorflow-cpu 2.21)"
                % PYTHON)


def _remove_tmpdirs():
    if os.environ.get("AGPROF_KEEP_TMP"):
        return
    for d in _tmpdirs:
        shutil.rmtree(d, ignore_errors=True)


def tmpdir(prefix="agprof-test-"):
    """A fresh directory, removed when the test exits."""
    d = tempfile.mkdtemp(prefix=prefix)
    if not _tmpdirs:
        atexit.register(_remove_tmpdirs)
    _tmpdirs.append(d)
    return d


def shared_sample_run(sample_file, out, timeout=600):
    """`agprof run -o OUT -- PYTHON samples/SAMPLE_FILE` (cwd: the source root); (exit status, stderr).

    Tests that only read a sample's plain recording (report's, the analyzer's)
    share one run of it within one ./run-tests (AGPROF_SHARED_RECORDINGS, a
    directory run-tests makes for each build): the first to ask records it
    under a lock, the others wait and read a copy.  Without the variable each
    test records its own.
    """
    def cmd(path):
        return [AGPROF, "run", "-o", path, "--", PYTHON, os.path.join(SAMPLES, sample_file)]

    shared = os.environ.get("AGPROF_SHARED_RECORDINGS")
    if not shared or not os.path.isdir(shared):
        p = subprocess.run(cmd(out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, cwd=SOURCE_ROOT)
        return p.returncode, p.stderr.decode("utf-8", "replace")
    import fcntl
    import json
    base = os.path.join(shared, os.path.basename(sample_file))
    with open(base + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(base + ".json"):
            p = subprocess.run(cmd(base + ".agprof"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=timeout, cwd=SOURCE_ROOT)
            with open(base + ".json", "w") as f:
                json.dump({"rc": p.returncode, "stderr": p.stderr.decode("utf-8", "replace")}, f)
        with open(base + ".json") as f:
            run = json.load(f)
    if os.path.exists(base + ".agprof"):
        shutil.copyfile(base + ".agprof", out)
    return run["rc"], run["stderr"]


def agprof(*args, timeout=300, env_extra=None):
    """Run `agprof ARGS...`; return (exit status, stdout text, stderr text)."""
    env = dict(os.environ, **env_extra) if env_extra else None
    p = subprocess.run([AGPROF] + [str(a) for a in args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout, env=env)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def kill_quietly(pid):
    """SIGKILL pid; True when it was still there to kill."""
    try:
        os.kill(pid, signal.SIGKILL)
        return True
    except ProcessLookupError:
        return False


def sample(name):
    """The path of samples/<name> (name with its .py)."""
    return os.path.join(SAMPLES, name)


def marker_lines(sample_name):
    """{marker: [line numbers]} of the `# agprof: <marker>` comments of a sample (name with .py)."""
    return marker_lines_of(sample(sample_name))


def marker_lines_of(path):
    """{marker: [line numbers]} of the `# agprof: <marker>` comments of the program at path."""
    found = {}
    with open(path) as fh:
        for no, text in enumerate(fh, 1):
            m = re.search(r"#\s*agprof:\s*([\w-]+)", text)
            if m:
                found.setdefault(m.group(1), []).append(no)
    return found


# The eager ops of a schema 6+ recording in the layout of schema 5: one eager_ops table with its indexes.
_SCHEMA5_EAGER = """
CREATE TABLE eager_ops_v5 (id INTEGER PRIMARY KEY, pid INTEGER NOT NULL, tid INTEGER NOT NULL,
    start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, op_id INTEGER NOT NULL, device_id INTEGER,
    callsite_id INTEGER, slow_path INTEGER NOT NULL DEFAULT 0, ok INTEGER NOT NULL DEFAULT 1,
    python_ns INTEGER NOT NULL DEFAULT 0);
INSERT INTO eager_ops_v5 SELECT * FROM eager_ops;
DROP TRIGGER eager_ops_insert;
DROP VIEW eager_ops;
DROP TABLE eager_op_rows;
DROP TABLE eager_op_keys;
DROP TABLE eager_op_blocks;
ALTER TABLE eager_ops_v5 RENAME TO eager_ops;
CREATE INDEX eager_ops_time ON eager_ops(start_ns);
CREATE INDEX eager_ops_thread ON eager_ops(pid, tid, start_ns);
PRAGMA user_version = 5;
"""


def edited_copy(path, out, edit):
    """Copy the recording at path to out and run edit(db) on the copy, committed: a file as an older
    collector, a hostile writer or a loaded machine would have left it.  Returns out."""
    shutil.copy(path, out)
    db = sqlite3.connect(out)
    try:
        edit(db)
        db.commit()
    finally:
        db.close()
    return out


def copy_as_schema5(path, out):
    """Copy the recording at path to out with its eager ops in schema 5's layout (readers of older files)."""
    edited_copy(path, out, lambda db: db.executescript(_SCHEMA5_EAGER))
