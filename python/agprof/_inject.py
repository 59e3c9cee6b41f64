"""`agprof attach PID`: what runs inside the attached program.

agprof attach (cmd/agprof/attach_pid.c) queues one line of Python in the
program's main thread (cmd/agprof/inject.c: Py_AddPendingCall through
ptrace); that line imports this module and calls start().  start() begins
an in-process recording (the same as agprof.start(), _record.py) and a
thread that stops it when agprof attach asks (a file `stop` in its folder)
or is gone.  Answers go to the file `status` in the folder agprof attach
made, one line: "started\\t<writer pid>", "stopped\\t<path>", "busy\\t<why>"
or "error\\t<why>".  Nothing here may raise: an exception would surface in
the program's own code.
"""
import os
import threading
import time

from . import _record


def _say(folder, text):
    try:
        tmp = os.path.join(folder, "status.tmp")
        with open(tmp, "w") as f:
            f.write(text + "\n")
        os.replace(tmp, os.path.join(folder, "status"))
    except OSError:
        pass  # agprof attach gave up and removed its folder


def _alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except OSError:
        return True


def _remove(folder):
    """agprof attach is gone (kill -9): nobody else will remove its folder."""
    for name in ("status", "status.tmp", "stop"):
        try:
            os.unlink(os.path.join(folder, name))
        except OSError:
            pass
    try:
        os.rmdir(folder)
    except OSError:
        pass


def start(folder, exe, path, force, agprof_pid):
    """Begin recording into path for agprof attach (pid agprof_pid, talking through folder)."""
    folder, exe, path = (os.fsdecode(p) for p in (folder, exe, path))
    if not os.path.isdir(folder) or os.path.exists(os.path.join(folder, "status")):
        return  # too late (agprof attach gave up), or queued twice
    if not _alive(agprof_pid):
        _remove(folder)  # agprof attach was killed before its line ran here
        return
    try:
        why = _record.recording_elsewhere()
        if why:
            _say(folder, "busy\t" + why)
            return
        _record.start(path, force=force, quiet=True, _exe=exe)
        writer, recorded = _record._session.proc.pid, _record._session.path
    except BaseException as e:  # noqa: B902 - the program must not see it
        _say(folder, "error\t%s" % e)
        return
    watcher = threading.Thread(target=_watch, args=(folder, agprof_pid, recorded), name="agprof-attach", daemon=True)
    watcher.start()
    _say(folder, "started\t%d" % writer)


def _watch(folder, agprof_pid, recorded):
    stop_file = os.path.join(folder, "stop")
    while _record._session is not None and _alive(agprof_pid) and not os.path.exists(stop_file):
        time.sleep(0.1)
    _say(folder, _stop_answer(recorded))
    if not _alive(agprof_pid):
        _remove(folder)


def _stop_answer(recorded):
    """The watcher's status line: its own stop's, or that of the stop that ended the recording first (the
    program's exit, its atexit's agprof.stop(), racing agprof attach's --duration)."""
    try:
        return "stopped\t%s" % _record.stop()
    except _record.AgprofError as e:
        with _record._lock:  # stop() holds it until the recording is written: the other stop has finished
            if _record._session is None and _record._last_path == recorded:
                return "stopped\t%s" % recorded
        return "error\t%s" % e
    except BaseException as e:  # noqa: B902 - the writer failed: the program must not see it
        return "error\t%s" % e
