"""Disk full during `agprof run`.

The recording is written to a small tmpfs (mounted in a private mount
namespace with `unshare -m`, so nothing is visible outside the test) while
samples/eager_heavy.py records far more eager ops than fit.  Without a
mount (not root, no unshare), the same run is made with a file size limit
set on agprof alone once the workload is running (RLIMIT_FSIZE: writes past
it fail with EFBIG, as on a full disk).

Expected: agprof stops writing at the first failure and says so in ONE line
(not one per lost event), the workload runs to its end with its own output,
agprof exits 3 (the workload itself succeeded), the summary counts only the
events stored, and the file keeps them readable (`agprof report` reads it,
and its eager_ops rows equal the summary's count).
"""
import os
import re
import resource
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq  # noqa: E402

OPS = 120000
TMPFS_SIZE = "2m"


def workload():
    return [agtest.PYTHON, agtest.sample("eager_heavy.py"), "--ops", str(OPS)]


def run_on_tmpfs(d):
    """(returncode, stderr, recording dir) or None when no tmpfs can be mounted."""
    if os.geteuid() != 0 or not shutil.which("unshare") or os.environ.get("AGPROF_TEST_NO_MOUNT"):
        return None
    mnt, out = os.path.join(d, "mnt"), os.path.join(d, "out")
    os.mkdir(mnt)
    os.mkdir(out)
    script = ('m=$1 o=$2; shift 2\n'
              'mount -t tmpfs -o size=%s agprof-test "$m" || exit 200\n'
              '"$AGPROF" run -o "$m/full.agprof" -- "$@" 2>"$o/stderr" >/dev/null\n'
              'rc=$?\ncp -a "$m"/. "$o"/\nexit $rc\n') % TMPFS_SIZE
    env = dict(os.environ, AGPROF=agtest.AGPROF)
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", mnt, out]
                       + workload(), env=env, cwd=agtest.SOURCE_ROOT,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=240)
    if p.returncode == 200 or not os.path.exists(os.path.join(out, "stderr")):
        print("note: cannot mount a tmpfs here (%s); using a file size limit instead"
              % p.stderr.decode("utf-8", "replace").strip()[-200:])
        return None
    with open(os.path.join(out, "stderr"), "rb") as fh:
        return p.returncode, fh.read(), out


def run_with_file_limit(d):
    """The fallback: RLIMIT_FSIZE on agprof only, set once the workload runs."""
    out = os.path.join(d, "lim")
    os.mkdir(out)
    cmd = [agtest.AGPROF, "run", "-o", os.path.join(out, "full.agprof"), "--"] + workload() + [
        "--marker", "4000"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, cwd=agtest.SOURCE_ROOT)
    limited = False
    for line in p.stdout:
        if not limited and line.startswith(b"AGPROF-MARKER"):
            resource.prlimit(p.pid, resource.RLIMIT_FSIZE, (1 << 20, resource.RLIM_INFINITY))
            limited = True
    _, err = p.communicate(timeout=240)
    return p.returncode, err, out


def main():
    agtest.need_agprof()
    d = agtest.tmpdir()
    got = run_on_tmpfs(d) or run_with_file_limit(d)
    rc, stderr, out = got
    text = stderr.decode("utf-8", "replace")
    lines = [l for l in text.splitlines() if l.strip()]
    check_eq(rc, 3, "agprof exit status when the recording failed (workload succeeded)")
    errors = [l for l in lines if l.startswith("agprof: error") or l.startswith("error")]
    check_eq(len(errors), 1, "error lines on stderr (once, not per event): %r" % errors[:3])
    ours = [l for l in lines if l.startswith("agprof") or l.startswith("error")]
    check(len(ours) <= 3, "agprof's lines on stderr in all", ours[:6], "<= 3")
    check(errors and "full.agprof" in errors[0], "the error names the recording", errors[:1])
    rec = os.path.join(out, "full.agprof")
    if not check(os.path.exists(rec), "the recording exists after the disk filled up"):
        agtest.finish("disk_full")
    left = [n for n in os.listdir(out) if n.startswith(".full.agprof")]
    check_eq(left, [], "temporary files left beside the recording")
    m = re.search(r"recorded (\d+) events \(\d+ traces, \d+ graph-function calls, (\d+) eager ops", text)
    if check(m is not None, "summary line", lines):
        stored = int(m.group(2))
        check(0 < stored < OPS, "eager ops in the summary", stored, "between 0 and %d" % OPS)
        db = agtest.open_recording(rec)
        check_eq(agtest.q1(db, "SELECT count(*) FROM eager_ops"), stored,
                 "eager_ops rows in the file = the summary's count")
        db.close()
    p = subprocess.run([agtest.AGPROF, "report", rec], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    check_eq(p.returncode, 0, "agprof report on what was kept: %s"
             % p.stderr.decode("utf-8", "replace")[-300:])
    agtest.finish("disk_full")


if __name__ == "__main__":
    main()
