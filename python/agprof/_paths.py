"""Where the agprof program is: inside the installed package (the wheel), or
named by AGPROF_BIN (a build tree), or on PATH (a `meson install`)."""
import os
import shutil

_HERE = os.path.dirname(os.path.abspath(__file__))


def _is_program(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def agprof_binary():
    """Path of the agprof executable; raises FileNotFoundError with the places tried."""
    env = os.environ.get("AGPROF_BIN")
    if env:
        if os.access(env, os.X_OK):
            return env
        raise FileNotFoundError("AGPROF_BIN='%s' is not an executable" % env)
    # The wheel keeps a small prefix inside the package: bin/, lib/agprof/,
    # share/agprof/rules: the program finds the collector and rules beside it.
    inside = os.path.join(_HERE, "bin", "agprof")
    if os.access(inside, os.X_OK):
        return inside
    found = shutil.which("agprof")
    if found and _is_program(found):  # not the wheel's own `agprof` script: that would loop
        return found
    raise FileNotFoundError(
        "cannot find the agprof program (not in the package, AGPROF_BIN unset, not on PATH); "
        "install agprof with 'pip install .' or set AGPROF_BIN")
