"""The agprof tab in TensorBoard: the recordings under each run's folder, a recording's HTML
report (`agprof report --format html`) and the diff of two recordings of one run.

TensorBoard finds it through the entry point `tensorboard_plugins` (pyproject.toml) when agprof
is pip-installed; `tensorboard --logdir logs` then shows an "agprof" tab wherever a
`*.agprof` file lies under logs.  The routes, under /data/plugin/agprof/:

    /index.js                        the tab (an ES module TensorBoard loads in an iframe)
    /recordings                      JSON: [{run, recordings: [{name, size, mtime} or {name, error}]}]
    /findings?run=R&name=N           JSON: the findings and a few numbers of the report
    /report?run=R&name=N             the HTML report
    /diff?run=R&base=B&new=N         the HTML diff of two recordings of run R

Every file is resolved by _files.resolve() (inside the real log directory, a regular file);
a request it refuses, or a recording agprof cannot read, gets a 4xx with one line of text and
one log line.  The pages keep their own Content-Security-Policy (no fetch, inline script and
styles); the tab shows them in a sandboxed iframe, so their script cannot reach TensorBoard.
"""
import base64
import hashlib
import logging
import os
import re

from tensorboard.backend import http_util
from tensorboard.plugins import base_plugin
from werkzeug import wrappers

from . import _files, _render
from ._files import Refused

logger = logging.getLogger("agprof.tensorboard")
_HERE = os.path.dirname(os.path.abspath(__file__))
_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)


def _script_hashes(page):
    """The sha256 sources of the page's inline scripts, for TensorBoard's Content-Security-Policy
    header (it allows no inline script otherwise; the page's own policy still applies too)."""
    return [base64.b64encode(hashlib.sha256(s.encode("utf-8")).digest()).decode("ascii")
            for s in _SCRIPT.findall(page)]


class AgprofPlugin(base_plugin.TBPlugin):
    """The tab; context.logdir is the one folder it reads (a --logdir_spec of several: inactive)."""

    plugin_name = "agprof"

    def __init__(self, context):
        self._logdir = context.logdir or None

    def get_plugin_apps(self):
        return {"/index.js": self._serve_js, "/recordings": self._serve_recordings,
                "/findings": self._serve_findings, "/report": self._serve_report, "/diff": self._serve_diff}

    def is_active(self):
        return _files.has_recordings(self._logdir)

    def frontend_metadata(self):
        return base_plugin.FrontendMetadata(es_module_path="/index.js", tab_name="agprof")

    def _answer(self, request, make):
        """make() -> (content, content type[, script hashes]); a Refused or a failure becomes one
        line of text with its status, and one log line."""
        try:
            if not self._logdir:
                raise Refused(404, "no log directory: the agprof tab reads only a single --logdir")
            content, kind, *hashes = make()
            return http_util.Respond(request, content, kind, csp_scripts_sha256s=hashes[0] if hashes else None)
        except Refused as e:
            status, message = e.status, str(e)
        except (OSError, ValueError) as e:  # a file gone between the check and the read, a bad report
            status, message = 500, "%s: %s" % (type(e).__name__, e)
        message = "".join(c if c.isprintable() else "?" for c in message)
        logger.warning("agprof tab: %s %s: %s", request.path, status, message)
        return http_util.Respond(request, message + "\n", "text/plain", code=status)

    def _resolve(self, request, run, key):
        return _files.resolve(self._logdir, run, request.args.get(key, ""))

    @wrappers.Request.application
    def _serve_js(self, request):
        with open(os.path.join(_HERE, "index.js"), encoding="utf-8") as f:
            return http_util.Respond(request, f.read(), "text/javascript")

    @wrappers.Request.application
    def _serve_recordings(self, request):
        return self._answer(request, lambda: (_files.list_recordings(self._logdir), "application/json"))

    @wrappers.Request.application
    def _serve_findings(self, request):
        def make():
            path = self._resolve(request, request.args.get("run", ""), "name")
            return _render.findings(path, os.path.realpath(self._logdir)), "application/json"
        return self._answer(request, make)

    @wrappers.Request.application
    def _serve_report(self, request):
        def make():
            path = self._resolve(request, request.args.get("run", ""), "name")
            page = _render.report_page(path, os.path.realpath(self._logdir))
            return page, "text/html", _script_hashes(page)
        return self._answer(request, make)

    @wrappers.Request.application
    def _serve_diff(self, request):
        def make():
            run = request.args.get("run", "")
            base, new = self._resolve(request, run, "base"), self._resolve(request, run, "new")
            page = _render.diff_page(base, new, os.path.realpath(self._logdir))
            return page, "text/html", _script_hashes(page)
        return self._answer(request, make)
