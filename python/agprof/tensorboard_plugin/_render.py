"""The pages and findings of recordings, made by the agprof program and kept for reuse.

The program is the analysis (the HTML page and the JSON report are its
printers): the tab runs it on the recordings _files.resolve() found, with
arguments as a list and a timeout, never through a shell.  It runs in the
recordings' folder, entered through a descriptor, with their file names
(opened without following a link): the page's title and the program's
messages name the recording, not where the log directory lies on the
server, and nothing swapped after the check sends it elsewhere.  Results are kept by (paths, mtime, size):
a recording rewritten by a new fit is analysed again.
"""
import collections
import json
import os
import subprocess
import threading

from .._paths import agprof_binary
from ._files import Refused

_TIMEOUT_S = 120
_KEEP = 16                                 # pages and reports kept
_running = threading.BoundedSemaphore(2)   # agprof programs at once: a burst of requests queues
_lock = threading.Lock()
_kept = collections.OrderedDict()          # {key: text}, least recently used first


def _key(what, paths):
    stats = [os.stat(p) for p in paths]
    return (what,) + tuple((p, s.st_mtime_ns, s.st_size) for p, s in zip(paths, stats))


def _open_folder(real_root, folder):
    """A descriptor of folder (a real path inside real_root, from _files.resolve()), reached from the root
    one name at a time without following a link: a folder swapped for a link after the check is refused."""
    rel = os.path.relpath(folder, real_root)
    fd = os.open(real_root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in ([] if rel == "." else rel.split(os.sep)):
            nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except OSError as e:
        os.close(fd)
        raise Refused(404, "'%s' changed under the tab: %s" % (rel, e.strerror)) from None
    return fd


def _one_line(text):
    """The program's last message line, printable and short."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    line = lines[-1] if lines else "agprof failed"
    return "".join(c if c.isprintable() else "?" for c in line)[:300]


def _run(args, real_root, folder):
    """agprof ARGS in folder, entered through a descriptor (_open_folder), the recordings named by their file
    names and opened without following a link (AGPROF_OPEN_NOFOLLOW): nothing between the check and the
    program's open can send it outside the log directory."""
    try:
        exe = agprof_binary()
    except FileNotFoundError as e:
        raise Refused(500, str(e)) from None
    with _running:
        fd = _open_folder(real_root, folder)
        try:
            proc = subprocess.run([exe] + args, cwd="/proc/self/fd/%d" % fd, pass_fds=(fd,),
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  timeout=_TIMEOUT_S, env=dict(os.environ, NO_COLOR="1", AGPROF_OPEN_NOFOLLOW="1"))
        except subprocess.TimeoutExpired:
            raise Refused(504, "agprof %s took more than %d s" % (args[0], _TIMEOUT_S)) from None
        finally:
            os.close(fd)
    if proc.returncode == 2:  # usage error, or a file that is not a readable recording (agprof --help)
        raise Refused(422, _one_line(proc.stderr.decode("utf-8", "replace")))
    if proc.returncode != 0:
        raise Refused(500, _one_line(proc.stderr.decode("utf-8", "replace")))
    return proc.stdout.decode("utf-8", "replace")


def _cached(what, paths, real_root, args):
    key = _key(what, paths)
    with _lock:
        if key in _kept:
            _kept.move_to_end(key)
            return _kept[key]
    folder = os.path.dirname(paths[0])
    if any(os.path.dirname(p) != folder for p in paths):
        raise Refused(400, "the recordings compared must be of one run")
    names = [os.path.basename(p) for p in paths]
    text = _run(args + [n if not n.startswith("-") else "./" + n for n in names], real_root, folder)
    with _lock:
        _kept[key] = text
        while len(_kept) > _KEEP:
            _kept.popitem(last=False)
    return text


def report_page(path, real_root):
    """`agprof report --format html` of the recording (docs/html.md)."""
    return _cached("report", [path], real_root, ["report", "--format", "html"])


def diff_page(base, new, real_root):
    """`agprof diff --format html BASE NEW`: the comparison page."""
    return _cached("diff", [base, new], real_root, ["diff", "--format", "html"])


def findings(path, real_root):
    """What the tab shows above the page: the findings and a few numbers of the JSON report."""
    report = json.loads(_cached("json", [path], real_root, ["report", "--format", "json"]))
    keep = ("severity", "rule", "function", "cause", "location", "message")
    session = report.get("session") or {}
    return {"findings": [{k: f.get(k) for k in keep} for f in report.get("findings") or []],
            "session": {k: session.get(k) for k in ("traces", "function_calls", "eager_share")}}
