"""agprof.report(): the analysis of a recording, as a dict and as text."""
import json
import sqlite3
import subprocess
import sys

from ._paths import agprof_binary
from ._record import AgprofError, last_recording


def _run(args):
    try:
        exe = agprof_binary()
    except FileNotFoundError as e:
        raise AgprofError(str(e)) from None
    proc = subprocess.run([exe] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")


def attached_note(path):
    """meta.attached of a recording made by agprof.start(): what it cannot hold, or None."""
    try:
        db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        try:
            row = db.execute("SELECT value FROM meta WHERE key = 'attached'").fetchone()
        finally:
            db.close()
        return row[0] if row else None
    except sqlite3.Error:
        return None


def report_text(path, sections=(), top=None):
    """The text report (`agprof report`), without colours; raises AgprofError."""
    args = ["report", "--no-color"] + list(sections) + (["--top", str(top)] if top is not None else [])
    status, out, err = _run(args + [str(path)])
    if status != 0:
        raise AgprofError(err.strip() or "agprof report exited with status %d" % status)
    return out


def report_html(path):
    """The HTML page (`agprof report --format html`, docs/html.md); raises AgprofError."""
    status, out, err = _run(["report", "--format", "html", str(path)])
    if status != 0:
        raise AgprofError(err.strip() or "agprof report exited with status %d" % status)
    return out


def report(path=None, show=True, sections=(), rules=None, settings=(), slices=None):
    """Analyze a recording; returns the JSON report (docs/report-json.md) as a dict.

    With show=True (the default) the text report is printed too, findings
    first, so that a notebook shows it below the cell.  `path` defaults to
    the last recording agprof.stop() completed.  settings: "RULE.NAME=VALUE"
    strings (`agprof report --set`).  slices: ascending times [T0, ..., Tn]
    of time.monotonic_ns() (the recording's clock): the report's `slices`
    then holds the run's figures over each [Ti, Ti+1) (`--slices`)."""
    path = path if path is not None else last_recording()
    if path is None:
        raise AgprofError("no recording: give agprof.report() a path, or record one with agprof.start()/stop()")
    extra = (["--rules", str(rules)] if rules else []) + [a for s in settings for a in ("--set", s)]
    if slices is not None:
        extra += ["--slices", ",".join(str(int(t)) for t in slices)]
    status, out, err = _run(["report", "--format", "json"] + extra + [str(path)])
    if status != 0:
        raise AgprofError(err.strip() or "agprof report exited with status %d" % status)
    data = json.loads(out)
    if show:
        note = attached_note(path)
        text = report_text(path, sections)
        sys.stdout.write(text + ("note: %s\n" % note if note else ""))
    return data


def check(path, thresholds):
    """`agprof check PATH THRESHOLDS...`: returns (exit status, text); 1 when a threshold is crossed."""
    status, out, err = _run(["check", str(path)] + list(thresholds))
    if status not in (0, 1):
        raise AgprofError(err.strip() or "agprof check exited with status %d" % status)
    return status, out + err
