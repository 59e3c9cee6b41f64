"""The recordings under a log directory, and the one check every request's file goes through.

No TensorBoard here: what a request may read is decided by these functions
alone.  A name in a request is untrusted: it becomes a path only after
resolve() has found its real path (links followed) inside the real log
directory and a regular file there.  The listing never follows a link to a
folder, so a link out of the log directory cannot make the walk read outside.
"""
import os
import stat

SUFFIX = ".agprof"
_MAX_DEPTH = 8         # folders below the log directory that are looked into
_MAX_ENTRIES = 20000   # directory entries looked at by one walk: a huge log directory lists a part
_MAX_RECORDINGS = 2000


class Refused(Exception):
    """A request the tab answers with an error: `status` (HTTP 4xx) and a one-line message."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def _inside(real, real_root):
    return real != real_root and os.path.commonpath([real, real_root]) == real_root


def _entry(real_root, folder, name):
    """One listed recording: its name, size and mtime, or why it cannot be shown (a link out)."""
    real = os.path.realpath(os.path.join(folder, name))
    if not _inside(real, real_root):
        return {"name": name, "error": "outside the log directory"}
    try:
        st = os.stat(real)
    except OSError as e:
        return {"name": name, "error": e.strerror or "cannot stat"}
    if not stat.S_ISREG(st.st_mode):
        return {"name": name, "error": "not a regular file"}
    return {"name": name, "size": st.st_size, "mtime": st.st_mtime}


def _walk(real_root):
    """Yield (run, folder, [recording names]) under real_root, bounded; links to folders not followed."""
    budget = _MAX_ENTRIES
    pending = [(real_root, 0)]
    while pending and budget > 0:
        folder, depth = pending.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)[:budget]
        except OSError:
            continue
        budget -= len(entries)
        names = [e.name for e in entries if e.name.endswith(SUFFIX) and _is_file_or_link(e)]
        if names:
            yield os.path.relpath(folder, real_root), folder, names
        if depth < _MAX_DEPTH:
            pending.extend((e.path, depth + 1) for e in reversed(entries) if _is_folder(e))


def _is_file_or_link(entry):
    try:
        return entry.is_symlink() or entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def _is_folder(entry):
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def list_recordings(logdir):
    """[{"run": RUN, "recordings": [{"name", "size", "mtime"} or {"name", "error"}]}] under logdir.

    RUN is the folder relative to the log directory ("." for the log directory itself)."""
    real_root = os.path.realpath(logdir)
    runs, count = [], 0
    for run, folder, names in _walk(real_root):
        names = names[:_MAX_RECORDINGS - count]
        count += len(names)
        runs.append({"run": run, "recordings": [_entry(real_root, folder, n) for n in names]})
        if count >= _MAX_RECORDINGS:
            break
    return sorted(runs, key=lambda r: r["run"])


def has_recordings(logdir):
    """Whether any recording is under logdir (stops at the first)."""
    return bool(logdir) and next(_walk(os.path.realpath(logdir)), None) is not None


def _check_run(run):
    if not run or "\0" in run or os.path.isabs(run):
        raise Refused(400, "bad run name %r" % (run or ""))
    if run != "." and any(part in ("", ".", "..") for part in run.split("/")):
        raise Refused(400, "bad run name %r: no '.', '..' or empty parts" % run)


def _check_name(name):
    if not name or "\0" in name or "/" in name or name in (".", "..") or not name.endswith(SUFFIX):
        raise Refused(400, "bad recording name %r: a file name ending in %s" % (name or "", SUFFIX))


def resolve(logdir, run, name):
    """The real path of recording NAME of run RUN; raises Refused unless it is a regular file
    inside the real log directory (after every link is followed)."""
    _check_run(run)
    _check_name(name)
    real_root = os.path.realpath(logdir)
    real = os.path.realpath(os.path.join(real_root, run, name))
    shown = name if run == "." else run + "/" + name
    if not _inside(real, real_root):
        raise Refused(403, "'%s' is outside the log directory" % shown)
    try:
        st = os.stat(real)
    except OSError:
        raise Refused(404, "no recording '%s'" % shown) from None
    if not stat.S_ISREG(st.st_mode):
        raise Refused(400, "'%s' is not a regular file" % shown)
    return real
