"""Notebook cells into the recording (table notebook_cells, docs/schema.md).

IPython compiles each cell under a made-up file name: `<ipython-input-N-HASH>`
in a terminal, `/tmp/ipykernel_PID/HASH.py` in a Jupyter kernel (ipykernel's
compiler), and keeps the cell's code in linecache, its number in
`compile._filename_map` and the text as typed in the history.  No reader can
open those names afterwards, so agprof.stop() in IPython (the %%agprof magic's
or the user's own) writes, for each one the recording names, the cell's label
("In [3]"), the cell's line of the code's line 1 and the cell's text: agprof
report then says "In [3], line 4" and offers a finding's edit as the
corrected cell.  Not under `agprof run`, whose launcher still writes the
recording when stop() returns.  Then `agprof __cell-facts` parses each cell's
code with this interpreter's ast, as the writer parses the user's files
(table code_facts, keyed by the cell's file name): the advice and edits of a
cell are placed with the same facts as a file's.
"""
import json
import linecache
import re
import sqlite3
import subprocess
import sys
import tempfile

from ._paths import agprof_binary

_IMPORTS_TF = re.compile(r"^(import|from)\s+tensorflow\b", re.M)
MAX_CELLS = 500  # the newest cells of a long session, at most
# {file name of a %%agprof cell's body: (label, first_line, the cell as typed)}, filled by the magic
BODIES = {}


def body_name(shell, body):
    """The file name IPython compiles a %%agprof cell's body under (run_cell with store_history=False)."""
    try:
        return shell.compile.get_code_name(body, shell.transform_cell(body), shell.execution_count)
    except Exception:  # another IPython's compiler: the body's locations keep their file name
        return None


def _history(shell, number):
    try:
        return shell.history_manager.input_hist_raw[number]
    except (AttributeError, IndexError, TypeError):
        return None


def this_cell(shell, line, body):
    """(label, first_line, text) of the running %%agprof cell, as the user typed it.

    IPython counted a cell it stores in its history before running it (the
    body then runs under the next number); a cell run without history keeps
    the current number."""
    number = shell.execution_count - 1
    raw = _history(shell, number)
    if raw and raw.startswith("%%agprof") and raw.split("\n", 1)[-1].rstrip() == body.rstrip():
        return "In [%d]" % number, 2, raw
    return "In [%d]" % shell.execution_count, 2, "%%agprof" + (" " + line if line.strip() else "") + "\n" + body


def _cell_text(shell, name, number):
    """The cell's text as typed when its lines are the compiled code's, else the code IPython compiled."""
    entry = linecache.cache.get(name)
    code = "".join(entry[2]) if entry and len(entry) > 2 and entry[2] else None
    raw = _history(shell, number)
    if raw is not None and (code is None or len(raw.splitlines()) == len(code.splitlines())):
        return raw
    return code


def _candidates(shell, bodies):
    """{file name: (label, first_line, text)} of the cells this shell compiled, %%agprof bodies as their cell."""
    try:
        numbers = dict(shell.compile._filename_map)
    except AttributeError:
        numbers = {}
    cells = {}
    for name, number in sorted(numbers.items(), key=lambda kv: kv[1])[-MAX_CELLS:]:
        if name in bodies or not isinstance(number, int):
            continue
        text = _cell_text(shell, name, number)
        if text is not None:
            cells[name] = ("In [%d]" % number, 1, text)
    cells.update(bodies)
    return cells


def record_in_ipython(path):
    """After agprof.stop() in IPython or Jupyter (the magic's or the user's own): write the cells; never raises."""
    ipython = sys.modules.get("IPython")
    try:
        shell = ipython.get_ipython() if ipython is not None else None
        if shell is not None and hasattr(shell, "compile"):
            record(path, shell, BODIES)
    except Exception:  # the recording is complete without them
        pass


def record(path, shell, bodies):
    """Write the cells the recording at path names (and those importing TensorFlow: its alias); best effort."""
    cells = _candidates(shell, bodies)
    if not cells:
        return
    try:
        db = sqlite3.connect(path, timeout=10)
    except sqlite3.Error:
        return
    try:
        with db:
            named = {r[0] for r in db.execute("SELECT text FROM strings WHERE text IN (%s)" %
                                              ",".join("?" * len(cells)), list(cells))}
            rows = [(name, label, first, text) for name, (label, first, text) in cells.items()
                    if name in named or _IMPORTS_TF.search(text)]
            db.executemany("INSERT OR REPLACE INTO notebook_cells (path, label, first_line, source)"
                           " VALUES (?, ?, ?, ?)", rows)
    except sqlite3.Error:
        return  # an older recording without the table: locations keep their file names
    finally:
        db.close()
    cell_facts(path, {name: _compiled(name, first, text) for name, _, first, text in rows})


def _compiled(name, first, text):
    """The code IPython compiled under name (magics transformed, line for line), else the text from first on."""
    entry = linecache.cache.get(name)
    if entry and len(entry) > 2 and entry[2]:
        return "".join(entry[2])
    return "\n".join(text.split("\n")[first - 1:])


def cell_facts(path, codes):
    """The cells' code facts into the recording (agprof __cell-facts, with this interpreter); best effort."""
    if not codes:
        return
    try:
        with tempfile.NamedTemporaryFile("w", suffix=".json", encoding="utf-8") as f:
            json.dump(codes, f)
            f.flush()
            subprocess.run([agprof_binary(), "__cell-facts", path, sys.executable, f.name],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=60)
    except (OSError, ValueError, subprocess.SubprocessError):
        pass  # without facts the cell's advice has no edit
