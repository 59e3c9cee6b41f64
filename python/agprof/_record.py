"""Recording from inside a running program: agprof.start() / stop() / record().

The collector library is loaded into this process with ctypes (PyDLL: the
GIL stays held, which it needs to learn the interpreter's frame layout) and
reaches TensorFlow by patching the GOT slots of TensorFlow's already-loaded
objects (collector/got.c).  A child `agprof __attach` makes the recording
and drains the collector's rings while the program runs, so the program's
own threads keep their CPU; agprof.stop() closes its stdin and waits for it.
See docs/collector.md, "Recording from inside Python".

One module for the capture window: under `agprof run` (where the collector
is already in the process) start() and stop() open and close the capture
window instead (the collector's agprof_capture(), collector/capture.c):
stop() stops recording eager ops, graph calls and black boxes, start()
records them again; with `agprof run --capture api` the window is closed
until the first start().  No path is needed there (the launcher's -o names
the recording); elsewhere start() needs one.
"""
import atexit
import ctypes
import contextlib
import importlib.machinery
import os
import subprocess
import sys
import threading
import warnings

from . import _cells
from ._paths import agprof_binary


class AgprofError(RuntimeError):
    """agprof could not start or finish a recording (the reason is the message)."""


class AgprofWarning(UserWarning):
    """Something agprof could not do; the program goes on unchanged."""


_lock = threading.RLock()
_session = None
_last_path = None
_hook_installed = False
_atexit_registered = False


class _Session:
    def __init__(self, path, proc=None, lib=None, quiet=False):
        self.path = path
        self.proc = proc
        self.lib = lib
        self.quiet = quiet


def _collector_in_process():
    """The collector is already mapped: LD_PRELOAD by `agprof run` (or an earlier start())."""
    try:
        with open("/proc/self/maps") as f:
            return any("libagprof-collector" in line for line in f)
    except OSError:
        return False


_preloaded = _collector_in_process()  # at import: before start() maps it itself


def _context():
    """TensorFlow's eager context if TensorFlow is imported and the context exists, else None."""
    if "tensorflow" not in sys.modules:
        return None
    try:
        from tensorflow.python.eager import context
        ctx = context.context_safe()
        return ctx if ctx is not None and getattr(ctx, "_context_handle", None) is not None else None
    except Exception:
        return None


def _functions_before():
    """Names of the functions TensorFlow already holds (traced before start())."""
    ctx = _context()
    if ctx is None:
        return ctx, []
    try:
        return ctx, sorted(ctx.list_function_names())
    except Exception:
        return ctx, []


def _note(nfunctions):
    tf_state = ("TensorFlow was imported before start()" if "tensorflow" in sys.modules
                else "TensorFlow was not imported yet at start()")
    before = ("; %d function%s traced before start() appear%s as loaded (their calls are graph calls, "
              "not counted under the Python function)" % (nfunctions, "" if nfunctions == 1 else "s",
                                                           "s" if nfunctions == 1 else "")
              if nfunctions else "")
    return ("recorded from agprof.start() to agprof.stop() inside a running program (%s): "
            "traces, variables and eager ops before start() are not in it%s; forks are recorded, "
            "exec'd children are not" % (tf_state, before))


def _load(collector):
    lib = ctypes.PyDLL(collector)
    lib.agprof_attach.argtypes = [ctypes.c_char_p]
    lib.agprof_attach.restype = ctypes.c_int
    lib.agprof_detach.restype = ctypes.c_int
    lib.agprof_attach_rescan.restype = ctypes.c_int
    lib.agprof_attach_bound.restype = ctypes.c_int
    lib.agprof_attach_function.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.agprof_attach_function.restype = None
    return lib


def _install_import_hook():
    """TensorFlow imported after start(): patch each of its extension modules as it loads.

    The collector's own dlopen hook is not interposed when it is loaded late, so
    the loader of extension modules tells it instead."""
    global _hook_installed
    if _hook_installed:
        return
    cls = importlib.machinery.ExtensionFileLoader
    original = cls.create_module

    def create_module(self, spec, _original=original):
        module = _original(self, spec)
        session = _session
        if session is not None and session.lib is not None and "tensorflow" in (spec.origin or ""):
            try:
                session.lib.agprof_attach_rescan()
            except Exception:  # never the program's failure
                pass
        return module

    cls.create_module = create_module
    _hook_installed = True


def _spawn(exe, path, force, quiet, note):
    argv = [sys.executable] + list(sys.argv)
    cmd = [exe, "__attach", "--pid", str(os.getpid()), "-o", os.fspath(path), "--note", note]
    cmd += (["-f"] if force else []) + (["-q"] if quiet else []) + ["--"] + argv
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as e:
        raise AgprofError("cannot start '%s': %s" % (exe, e.strerror or e)) from None
    line = proc.stdout.readline().decode("utf-8", "replace").rstrip("\n").split("\t")
    if len(line) != 3 or line[0] != "ready":
        err = proc.communicate()[1].decode("utf-8", "replace").strip()
        raise AgprofError(err or "agprof __attach exited with status %s" % proc.returncode)
    return proc, line[1], line[2]


def _end_child(proc):
    """Close the writer's stdin (stop), wait for the recording; returns (status, stderr text)."""
    try:
        proc.stdin.close()
    except OSError:
        pass
    proc.stdin = None  # communicate() must not flush it
    try:
        _, err = proc.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return proc.returncode, err.decode("utf-8", "replace").strip()


def _capture(on):
    """Open (on) or close the capture window of `agprof run`; False when the collector lacks it."""
    try:
        fn = ctypes.CDLL(None).agprof_capture
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn(1 if on else 0) == 0


def start(path=None, force=False, quiet=False, _exe=None):
    """Start recording this process's TensorFlow activity into the recording `path`.

    Under `agprof run`, open its capture window instead (path is then not
    needed, nor used).  TensorFlow may already be imported (it usually is)
    or be imported later.  Raises AgprofError when a recording is already
    running here, when `path` is missing or exists (unless force=True) or
    when the recording cannot be created."""
    global _session, _atexit_registered
    with _lock:
        if _session is not None:
            raise AgprofError("agprof is already recording to '%s'; call agprof.stop() first" %
                              (_session.path or "the recording of agprof run"))
        if _preloaded or os.environ.get("AGPROF_SHM"):
            if not _capture(True):
                warnings.warn("this program runs under an 'agprof run' whose collector has no capture "
                              "window: agprof.start() records nothing more", AgprofWarning, stacklevel=2)
            _session = _Session(os.fspath(path) if path is not None else None)
            return
        if path is None:
            raise AgprofError("agprof.start() needs a recording path outside 'agprof run'")
        try:
            exe = _exe or agprof_binary()  # agprof attach names itself
        except FileNotFoundError as e:
            raise AgprofError(str(e)) from None
        ctx, names = _functions_before()
        proc, shm_dir, collector = _spawn(exe, path, force, quiet, _note(len(names)))
        try:
            lib = _load(collector)
            rc = lib.agprof_attach(shm_dir.encode())
        except (OSError, AttributeError) as e:
            _end_child(proc)
            raise AgprofError("cannot load the collector '%s': %s" % (collector, e)) from None
        if rc != 0:
            _end_child(proc)
            raise AgprofError("the collector is already recording in this process" if rc == 1 else
                              "cannot create the recording buffers in '%s'" % shm_dir)
        _session = _Session(os.fspath(path), proc, lib, quiet)
        _known_functions(lib, ctx, names)
        _install_import_hook()
        if "tensorflow" in sys.modules and lib.agprof_attach_bound() == 0:
            warnings.warn("none of TensorFlow's calls could be patched (a statically bound or "
                          "unsupported build): TensorFlow events will be missing from '%s'" % path,
                          AgprofWarning, stacklevel=2)
        if not _atexit_registered:
            atexit.register(_stop_at_exit)  # the program may end inside the block
            _atexit_registered = True


def _known_functions(lib, ctx, names):
    """Give the collector the FunctionDefs traced before start(), so their calls are calls."""
    for name in names:
        try:
            fdef = ctx.get_function_def(name).SerializeToString()
        except Exception:
            fdef = b""
        lib.agprof_attach_function(name.encode(), fdef, len(fdef))


def stop():
    """Stop recording; returns the recording's path once it is complete.

    Raises AgprofError when nothing is being recorded or when the recording
    could not be written (it then keeps what was stored before)."""
    global _session, _last_path
    with _lock:
        session = _session
        if session is None:
            raise AgprofError("agprof is not recording: agprof.stop() without agprof.start()")
        _session = None
        if session.proc is None:  # under `agprof run`: close the capture window
            _capture(False)
            return session.path
        session.lib.agprof_detach()
        status, err = _end_child(session.proc)
        if err and (status != 0 or not session.quiet):
            sys.stderr.write(err + "\n")
        if status != 0:
            raise AgprofError(err.splitlines()[-1] if err else
                              "agprof __attach exited with status %d" % status)
        _last_path = session.path
        _cells.record_in_ipython(session.path)  # a notebook's cells, for locations by cell (docs/schema.md)
        return session.path


def is_recording():
    """Whether start() was called without stop() yet."""
    return _session is not None


def recording_elsewhere():
    """Why a new in-process recording must not start here (None when it may): the program runs
    under `agprof run`, or agprof.start() (or an attach) is already recording it."""
    if _preloaded or os.environ.get("AGPROF_SHM"):
        return "this program runs under 'agprof run', which records it already"
    session = _session
    if session is not None:
        return "this program is already recording to '%s' (agprof.start() or an earlier attach)" % session.path
    return None


def last_recording():
    """Path of the last recording stop() completed, or None."""
    return _last_path


def _stop_at_exit():
    if _session is not None and _session.proc is not None:
        try:
            stop()
        except Exception as e:
            sys.stderr.write("agprof: %s\n" % e)


@contextlib.contextmanager
def record(path, force=False, quiet=False):
    """Record the block: `with agprof.record("train.agprof"): ...`."""
    start(path, force=force, quiet=quiet)
    try:
        yield path
    except BaseException:
        # the block's own exception wins; a failed stop() is only a warning then
        try:
            stop()
        except AgprofError as e:
            warnings.warn(str(e), AgprofWarning, stacklevel=3)
        raise
    stop()
