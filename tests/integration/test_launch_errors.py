"""agprof run's own errors, before any workload runs.

- PROGRAM not found: exit 127 and a one-line error (like a shell).
- PROGRAM not executable: exit 126 and a one-line error.
- -o naming an existing file: exit 2, the workload does not start, the file
  is left alone; with --force the workload runs and the file is replaced.
- no -o: the recording goes to a new agprof-N.agprof in the working
  directory.
- -o into an unwritable place (a path below a regular file, unwritable even
  for root; and a read-only directory when not root): agprof must fail
  BEFORE starting the workload: samples/touch_file.py, which creates a file,
  must not have run.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq  # noqa: E402


def one_line(stderr):
    lines = [l for l in stderr.decode("utf-8", "replace").splitlines() if l.strip()]
    return len(lines) == 1, lines


def main():
    agtest.need_agprof()
    d = agtest.tmpdir()

    for prog in ("/nonexistent/agprof-no-such-program",
                 "agprof-no-such-program-on-path"):
        p = agtest.run_agprof(os.path.join(d, "nf.agprof"), [prog, "arg"])
        check_eq(p.returncode, 127, "exit status for missing program %s" % prog)
        ok, lines = one_line(p.stderr)
        check(ok, "one-line error for missing program %s" % prog, lines, "1 line")
        check(prog in p.stderr.decode("utf-8", "replace"),
              "error names the missing program", p.stderr, prog)

    script = os.path.join(d, "not-executable.sh")
    with open(script, "w") as fh:
        fh.write("#!/bin/sh\necho should-not-run\n")
    os.chmod(script, 0o644)
    p = agtest.run_agprof(os.path.join(d, "nx.agprof"), [script])
    check_eq(p.returncode, 126, "exit status for a non-executable program")
    ok, lines = one_line(p.stderr)
    check(ok, "one-line error for a non-executable program", lines, "1 line")
    check(b"should-not-run" not in p.stdout, "non-executable program did not run")

    blocker = os.path.join(d, "a-regular-file")
    with open(blocker, "w") as fh:
        fh.write("x")
    places = [os.path.join(blocker, "out.agprof")]
    if os.geteuid() != 0:
        ro = os.path.join(d, "read-only")
        os.mkdir(ro)
        os.chmod(ro, 0o555)
        places.append(os.path.join(ro, "out.agprof"))
    for i, out in enumerate(places):
        created = os.path.join(d, "workload-ran-%d" % i)
        p = agtest.run_agprof(out, [agtest.PYTHON, agtest.sample("touch_file.py"), created])
        check(p.returncode != 0, "agprof fails when -o is %s" % out, p.returncode, "non-zero")
        check(p.stderr.strip() != b"", "agprof says why -o %s failed" % out)
        check(not os.path.exists(created),
              "the workload did not start when -o %s is unwritable" % out)
        check(not os.path.exists(out), "no recording created at %s" % out)
    existing = os.path.join(d, "existing.agprof")
    with open(existing, "w") as fh:
        fh.write("not a recording, keep me")
    created = os.path.join(d, "workload-ran-existing")
    p = agtest.run_agprof(existing, [agtest.PYTHON, agtest.sample("touch_file.py"), created])
    check_eq(p.returncode, 2, "exit status when -o names an existing file")
    check(not os.path.exists(created), "the workload did not start when -o exists")
    with open(existing) as fh:
        check_eq(fh.read(), "not a recording, keep me", "existing -o file left untouched")
    env = dict(os.environ)
    forced = subprocess.run([agtest.AGPROF, "run", "--force", "-o", existing, "--",
                             agtest.PYTHON, agtest.sample("touch_file.py"), created],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=120)
    check_eq(forced.returncode, 0, "exit status with --force over an existing file")
    check(os.path.exists(created), "the workload ran with --force")
    db = agtest.open_recording(existing)
    agtest.check_recording_header(db)

    cwd = os.path.join(d, "default-output")
    os.mkdir(cwd)
    p = subprocess.run([agtest.AGPROF, "run", "--", "/bin/echo", "x"], cwd=cwd,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    check_eq(p.returncode, 0, "exit status without -o")
    made = sorted(f for f in os.listdir(cwd) if re.match(r"agprof-\d+\.agprof$", f))
    check_eq(len(made), 1, "agprof-N.agprof files created in the working directory without -o")
    agtest.finish("launch_errors")


if __name__ == "__main__":
    main()
