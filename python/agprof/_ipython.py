"""The IPython / Jupyter extension: %load_ext agprof.

  %%agprof [-o FILE] [-f] [--check THRESHOLDS...]   record the cell, show the report below it
  %agprof_report [FILE]                            show the last report again (or FILE's)
"""
import os
import shlex
import sys
import tempfile

from . import _cells, _record, _report

_state = {"last": None, "dir": None, "n": 0}


def _parse(line):
    """-o FILE, -f, --check THRESHOLDS... (the rest of the line)."""
    args = shlex.split(line)
    opts = {"output": None, "force": False, "check": None}
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-o", "--output") and i + 1 < len(args):
            opts["output"] = args[i + 1]
            i += 2
        elif a in ("-f", "--force"):
            opts["force"] = True
            i += 1
        elif a == "--check":
            opts["check"] = args[i + 1:]
            break
        else:
            raise ValueError("'%s': unknown option of %%%%agprof (-o FILE, -f, --check THRESHOLDS...)" % a)
    return opts


def _cell_output():
    if _state["dir"] is None:
        _state["dir"] = tempfile.mkdtemp(prefix="agprof-cells-")
    _state["n"] += 1
    return os.path.join(_state["dir"], "cell-%d.agprof" % _state["n"])


def _show_html(path):
    """The HTML page too, where the front-end shows HTML (a notebook; never a terminal's IPython).

    In a sandboxed iframe: the page's styles and script stay out of the notebook's."""
    import html

    from IPython import get_ipython
    from IPython.display import display

    ip = get_ipython()
    if ip is None or "text/html" not in ip.display_formatter.active_types:
        return
    page = _report.report_html(path)
    display({"text/html": '<iframe title="agprof report" sandbox="allow-scripts" '
             'style="width:100%%;height:640px;border:1px solid #ccc" srcdoc="%s"></iframe>' % html.escape(page)},
            raw=True)


def _show(path):
    """Findings first: the run and its findings (`agprof report --summary`); in a notebook, the HTML page too."""
    text = _report.report_text(path, ["--summary"])
    note = _report.attached_note(path)
    sys.stdout.write(text)
    if note:
        sys.stdout.write("note: %s\n" % note)
    sys.stdout.write("(recording: %s; agprof.report(%r) for the dict and every section)\n" % (path, path))
    sys.stdout.flush()
    _show_html(path)


def load_ipython_extension(ipython):
    from IPython.core.error import UsageError
    from IPython.core.magic import Magics, cell_magic, line_magic, magics_class

    @magics_class
    class AgprofMagics(Magics):
        @cell_magic
        def agprof(self, line, cell):
            """Record this cell with agprof and show the report below it.

            %%agprof [-o FILE] [-f] [--check THRESHOLDS...]"""
            try:
                opts = _parse(line)
            except ValueError as e:
                raise UsageError(str(e)) from None
            path = opts["output"] or _cell_output()
            name = _cells.body_name(self.shell, cell)
            if name is not None:
                _cells.BODIES[name] = _cells.this_cell(self.shell, line, cell)
            try:
                _record.start(path, force=opts["force"] or opts["output"] is None, quiet=True)
            except _record.AgprofError as e:
                raise UsageError("agprof: %s" % e) from None
            try:
                result = self.shell.run_cell(cell, store_history=False)
            finally:
                try:
                    _record.stop()
                except _record.AgprofError as e:
                    print("agprof: %s" % e, file=sys.stderr)
                    return None
            _state["last"] = path
            if result is not None and not result.success:
                print("agprof: the cell raised; what ran before is recorded in %s" % path)
            _show(path)
            if opts["check"] is not None:
                status, text = _report.check(path, opts["check"])
                sys.stdout.write(text)
            return None

        @line_magic
        def agprof_report(self, line):
            """Show the last %%agprof report again (or the report of FILE)."""
            path = line.strip() or _state["last"]
            if not path:
                raise UsageError("no %%agprof cell has been recorded yet")
            try:
                _show(path)
            except _record.AgprofError as e:
                raise UsageError("agprof: %s" % e) from None

    ipython.register_magics(AgprofMagics)


def unload_ipython_extension(ipython):
    pass
