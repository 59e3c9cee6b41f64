"""The agprof tab in a real TensorBoard (issue 47), served on 127.0.0.1 over a log directory with
real recordings: two Keras fits recorded by agprof.keras.Callback(log_dir=...)
(tensorboard_workload.py), and bad ones beside them: a truncated copy, a copy of schema 999, a
link out of the log directory (to a readable recording: were it read, it would be served).

Oracles are TensorBoard's own API (/data/plugins_listing; its scalars plugin's
/data/plugin/scalars/scalars: the callback's agprof/traces in run1/train, a point per epoch, as the
callback wrote them), the file system (the listing's names and sizes), and the agprof program run by the test (the pages served are agprof's pages; the
findings the tab shows are the JSON report's).  Headless Chromium loads the tab as TensorBoard
loads it (plugin_entry.html, and the whole UI at #agprof for a screenshot).  A recording, or a
folder on its way, swapped for a link out of the log directory after the tab's check (the race, made
in that order): refused, never read.  Skips (77) without
the tensorboard module (./setup installs it); Chromium's part is skipped without chromium.
"""
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from agtestlib import PYTHON, check, check_eq, finish, need_agprof  # noqa: E402
import agtestlib  # noqa: E402

sys.path.insert(0, HERE)
import tensorboard_serve  # noqa: E402

RUN = "run1/agprof"  # where the callback puts LOG/run1's recordings
WRITTEN = {}  # {fit: its traces per epoch}, as the callback wrote them (tensorboard_workload.py)


def make_log_dir(d):
    """LOG/run1/agprof/{base,new}.agprof from the Keras fits, LOG/bad/ with the bad cases."""
    log = os.path.join(d, "logs")
    r = subprocess.run([PYTHON, os.path.join(HERE, "tensorboard_workload.py"), os.path.join(log, "run1")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=240)
    if not check(r.returncode == 0, "the Keras workload ran", r.stderr[-2000:]):
        return None
    made = json.loads(r.stdout.strip().splitlines()[-1])
    global WRITTEN
    WRITTEN = made.pop("traces", {})
    check_eq(made, {k: os.path.join(log, RUN, k + ".agprof") for k in ("base", "new")},
             "a relative path with log_dir: the recordings under log_dir/agprof")
    bad = os.path.join(log, "bad")
    os.mkdir(bad)
    with open(made["base"], "rb") as f:
        whole = f.read()
    with open(os.path.join(bad, "trunc.agprof"), "wb") as f:
        f.write(whole[:len(whole) // 2])
    shutil.copy(made["base"], os.path.join(bad, "s999.agprof"))
    db = sqlite3.connect(os.path.join(bad, "s999.agprof"))
    db.execute("PRAGMA user_version = 999")
    db.close()
    os.mkdir(os.path.join(d, "outside"))
    shutil.copy(made["base"], os.path.join(d, "outside", "secret.agprof"))
    os.symlink(os.path.join(d, "outside", "secret.agprof"), os.path.join(bad, "out.agprof"))
    return log


class Server:
    """tensorboard_serve.py LOG in the background; its stderr (TensorBoard's and the tab's log) in a file."""

    def __init__(self, log, d):
        self.err_path = os.path.join(d, "tensorboard.err")
        self.err = open(self.err_path, "w+")
        self.proc = subprocess.Popen([PYTHON, os.path.join(HERE, "tensorboard_serve.py"), log],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.err)
        self.url = None
        self.root = os.path.dirname(log)
        deadline = time.monotonic() + 180
        while self.url is None and self.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
            m = re.search(r"TensorBoard \S+ at (http://127\.0\.0\.1:\d+)/", self.log())
            self.url = m.group(1) if m else None

    def log(self):
        with open(self.err_path) as f:
            return f.read()

    def get(self, path):
        """(status, headers, body text) of GET path."""
        try:
            with urllib.request.urlopen(self.url + path, timeout=180) as r:
                return r.status, r.headers, r.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read().decode("utf-8", "replace")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                agtestlib.kill_quietly(self.proc.pid)
                self.proc.wait()
        self.err.close()


def agprof_in(log, *args):
    """agprof ARGS run in the recordings' folder of the run (as the tab runs it: the recordings by their names)."""
    p = subprocess.run([agtestlib.AGPROF] + list(args), cwd=os.path.join(log, RUN), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE,
                       timeout=240, env=dict(os.environ, NO_COLOR="1"))
    return p.returncode, p.stdout.decode("utf-8", "replace")


def check_entry_point():
    from tensorboard.plugins import base_plugin
    module, attr = tensorboard_serve.entry_point()
    plugin = getattr(module, attr, None)
    check(isinstance(plugin, type) and issubclass(plugin, base_plugin.TBPlugin),
          "pyproject.toml's tensorboard_plugins entry point names a TBPlugin", plugin)
    check_eq(getattr(plugin, "plugin_name", None), "agprof", "the plugin's name")


def check_listing(srv, log):
    status, _, text = srv.get("/data/plugins_listing")
    tab = json.loads(text).get("agprof") if status == 200 else None
    check(tab is not None and tab["enabled"], "TensorBoard lists the agprof tab, enabled", tab)
    check_eq((tab or {}).get("loading_mechanism"), {"type": "IFRAME", "module_path": "/data/plugin/agprof/index.js"},
             "the tab is an ES module in an iframe")
    status, _, text = srv.get("/data/plugin/agprof/recordings")
    runs = {r["run"]: r["recordings"] for r in json.loads(text)} if status == 200 else {}
    want = {}
    for run in (RUN, "bad"):
        for name in sorted(os.listdir(os.path.join(log, run))):
            path = os.path.join(log, run, name)
            if not name.endswith(".agprof"):
                continue
            want.setdefault(run, []).append({"name": name, "error": "outside the log directory"} if os.path.islink(path)
                                            else {"name": name, "size": os.path.getsize(path)})
    got = {run: [{k: v for k, v in r.items() if k != "mtime"} for r in recs] for run, recs in runs.items()}
    check_eq(got, want, "the recordings listed per run: the files' names and sizes; the link out refused")


def check_scalars(srv):
    """The callback's per-epoch scalars come back from TensorBoard's own HTTP API (its scalars plugin), in
    run1/train, one point per epoch: the traces of the fit that wrote them last (both fits write that run;
    TensorBoard keeps the later one where a step repeats) or of the first."""
    status, _, text = srv.get("/data/plugin/scalars/scalars?run=run1%2Ftrain&tag=agprof%2Ftraces")
    points = json.loads(text) if status == 200 else []
    got = [int(round(p[2])) for p in sorted(points, key=lambda p: (p[1], p[0]))]
    steps = sorted({p[1] for p in points})
    check_eq([len(WRITTEN.get(k, [])) for k in ("base", "new")], [4, 4], "the workload's fits wrote 4 epochs each")
    check(WRITTEN.get("base") != WRITTEN.get("new"), "the fits' series differ (base retraces each epoch)", WRITTEN)
    check_eq(steps, [0, 1, 2, 3], "TensorBoard's scalars: a point per epoch, step = epoch")
    print("agprof/traces from TensorBoard: %s; written: %s" % ([latest_of(points, s) for s in steps], WRITTEN))
    check([latest_of(points, s) for s in steps] in (WRITTEN.get("new"), WRITTEN.get("base")),
          "TensorBoard serves agprof/traces as the callback wrote them", (got, WRITTEN))


def latest_of(points, step):
    """The value of the latest point at step (by wall time), as an int."""
    at = [p for p in points if p[1] == step]
    return int(round(max(at, key=lambda p: p[0])[2])) if at else None


def check_swapped(log, d):
    """A recording or its folder swapped for a link out of the log directory after the tab's check and before
    the program opens it (the race, made here in that order): refused, the recording outside never read."""
    from agprof.tensorboard_plugin import _files, _render
    real_root = os.path.realpath(log)
    secret = os.path.join(d, "outside", "secret.agprof")
    work = os.path.join(log, "swap", "agprof")
    os.makedirs(work)
    shutil.copy(os.path.join(log, RUN, "base.agprof"), os.path.join(work, "a.agprof"))
    path = _files.resolve(log, "swap/agprof", "a.agprof")  # the check: a regular file inside
    os.rename(os.path.join(work, "a.agprof"), os.path.join(work, "kept.agprof"))
    os.symlink(secret, os.path.join(work, "a.agprof"))  # then the swap
    try:
        _render.findings(path, real_root)
        refused = None
    except _files.Refused as e:
        refused = e
    check(refused is not None and refused.status == 422 and "symbolic link" in str(refused),
          "a recording swapped for a link: refused (the program opens no link)", refused and (refused.status, str(refused)))
    os.unlink(os.path.join(work, "a.agprof"))
    os.rename(os.path.join(work, "kept.agprof"), os.path.join(work, "a.agprof"))
    path = _files.resolve(log, "swap/agprof", "a.agprof")
    os.rename(work, work + ".moved")
    os.symlink(os.path.join(d, "outside"), work)  # a folder on the way swapped for a link out
    shutil.copy(secret, os.path.join(d, "outside", "a.agprof"))
    try:
        _render.report_page(path, real_root)
        refused = None
    except _files.Refused as e:
        refused = e
    check(refused is not None and refused.status == 404, "a folder swapped for a link: refused",
          refused and (refused.status, str(refused)))


def check_pages(srv, log):
    """The report, the findings and the diff as the tab serves them, against agprof's own."""
    base, new = "base.agprof", "new.agprof"
    status, headers, page = srv.get("/data/plugin/agprof/report?run=%s&name=base.agprof" % RUN)
    check_eq((status, page), (200, agprof_in(log, "report", "--format", "html", base)[1]),
             "the page served is agprof report's page")
    csp = headers.get("Content-Security-Policy", "")
    check("script-src" in csp and "'sha256-" in csp and "unsafe-inline" not in csp.split("script-src")[1],
          "the page's script is allowed by its hash only", csp)
    rc, text = agprof_in(log, "report", "--format", "json", base)
    findings = json.loads(text)["findings"] if rc == 0 else []
    check(any(f["rule"] == "retracing" and f["function"] == "scale" for f in findings),
          "the planted retrace is a finding of the base fit", [(f["rule"], f["function"]) for f in findings])
    status, _, text = srv.get("/data/plugin/agprof/findings?run=%s&name=base.agprof" % RUN)
    got = json.loads(text)["findings"] if status == 200 else None
    check_eq([(f["rule"], f["function"], f["message"]) for f in got or []],
             [(f["rule"], f["function"], f["message"]) for f in findings], "the tab's findings are the report's")
    status, _, page = srv.get("/data/plugin/agprof/diff?run=%s&base=base.agprof&new=new.agprof" % RUN)
    check_eq((status, page), (200, agprof_in(log, "diff", "--format", "html", base, new)[1]),
             "the diff page served is agprof diff's page")
    return findings


BAD = [  # (what, query, status, words the one line has)
    ("truncated", "report?run=bad&name=trunc.agprof", 422, "truncated"),
    ("schema 999", "report?run=bad&name=s999.agprof", 422, "schema version 999"),
    ("schema 999 in a diff", "diff?run=bad&base=s999.agprof&new=trunc.agprof", 422, "schema version 999"),
    ("findings of schema 999", "findings?run=bad&name=s999.agprof", 422, "schema version 999"),
    ("a link out", "report?run=bad&name=out.agprof", 403, "outside the log directory"),
    ("a link out in a diff", "diff?run=bad&base=out.agprof&new=trunc.agprof", 403, "outside the log directory"),
    ("a path as a name in a diff", "diff?run=%s&base=base.agprof&new=..%%2F..%%2Fbad%%2Fout.agprof" % RUN, 400,
     "bad recording name"),
    ("'..' in the name", "report?run=bad&name=..%2Foutside%2Fsecret.agprof", 400, "bad recording name"),
    ("'..' as the run", "report?run=..&name=secret.agprof", 400, "bad run name"),
    ("'..' inside the run", "report?run=bad%2F..%2F..%2Foutside&name=secret.agprof", 400, "bad run name"),
    ("an absolute run", "report?run=%2Ftmp&name=secret.agprof", 400, "bad run name"),
    ("no such recording", "report?run=bad&name=nope.agprof", 404, "no recording"),
    ("no name", "report?run=bad", 400, "bad recording name"),
]


def check_bad(srv):
    """Each bad request: its 4xx and one line of text, one log line; TensorBoard goes on."""
    for what, query, status, words in BAD:
        before = srv.log().count("agprof tab:")
        got, _, text = srv.get("/data/plugin/agprof/" + query)
        check_eq(got, status, "%s: the status" % what)
        check(words in text and text.count("\n") == 1 and text.endswith("\n"), "%s: one line saying why" % what,
              text[:300])
        check(srv.root not in text, "%s: names no path of the server's" % what, text)
        after = srv.log()
        check_eq(after.count("agprof tab:") - before, 1, "%s: one log line" % what)
        check(words in after.splitlines()[-1] if after else False, "%s: the log line says why" % what)
    check(srv.proc.poll() is None and srv.get("/data/plugins_listing")[0] == 200,
          "TensorBoard still serves after the bad requests")


def chromium(args, profile):
    """Chromium headless; (stdout, console lines on stderr)."""
    r = subprocess.run(["/usr/bin/chromium", "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0",
                        "--virtual-time-budget=20000"] + args, capture_output=True, text=True, timeout=180)
    return r.stdout, [ln for ln in r.stderr.splitlines() if ":CONSOLE" in ln or "Uncaught" in ln]


def newest(path):
    t = time.time() + 60
    os.utime(path, (t, t))


def check_browser(srv, log, d, findings):
    if not os.access("/usr/bin/chromium", os.X_OK):
        print("skip the browser part: no /usr/bin/chromium (apt-get install chromium)")
        return
    profile = os.path.join(d, "chromium")
    entry = srv.url + "/data/plugin_entry.html?name=agprof"
    _, console = chromium(["--dump-dom", "data:text/html,<script>nosuch()</script>"], profile)
    check(any("Uncaught" in ln for ln in console), "chromium: a script error is seen (the checks below can fail)")
    newest(os.path.join(log, "bad", "s999.agprof"))  # the tab opens the newest recording
    dom, console = chromium(["--dump-dom", entry], profile)
    status = re.search(r'id="agprof-status"[^>]*>([^<]*)<', dom)
    check(status and "schema version 999" in status.group(1) and 'class="bad"' in dom,
          "the tab shows a recording's error as its one line", status and status.group(1))
    newest(os.path.join(log, RUN, "base.agprof"))
    dom, console = chromium(["--dump-dom", entry], profile)
    shown = re.findall(r'<li class="finding">([^<]*)</li>', dom)
    check_eq(len(shown), len(findings), "the tab lists the findings")
    for f, text in zip(findings, shown):
        check(f["rule"] in text and f["function"] in text,
              "the tab shows finding %s of %s" % (f["rule"], f["function"]), text)
    check('sandbox="allow-scripts"' in dom and "report?run=run1%2Fagprof&amp;name=base.agprof" in dom,
          "the report is in a sandboxed iframe", re.findall(r"<iframe[^>]*>", dom))
    for name in ("bad", "base.agprof", "new.agprof", "out.agprof"):
        check(">%s<" % name in dom or ">%s" % name in dom, "the tab lists %s" % name)
    check(not console, "the tab: nothing in the console", console[:3])
    check_screenshot(srv, d, profile)


def check_screenshot(srv, d, profile):
    """TensorBoard's whole UI at #agprof: the report drawn in the tab (the iframe's part not blank)."""
    from PIL import Image  # pillow comes with tensorboard
    # The page is made first (the server keeps it, as for a user who opened it before): Chromium's
    # virtual time runs on while the server analyses.  A sandboxed iframe is drawn by a process of
    # its own that headless screenshots may miss: here it shares the tab's.
    srv.get("/data/plugin/agprof/report?run=%s&name=base.agprof" % RUN)
    png = os.path.join(d, "tab.png")
    _, console = chromium(["--window-size=1400,1000", "--hide-scrollbars", "--disable-features=IsolateSandboxedIframes",
                           "--screenshot=" + png, srv.url + "/#agprof"], profile)
    if not check(os.path.exists(png), "chromium made a screenshot of the tab"):
        return
    report = Image.open(png).convert("RGB").crop((300, 300, 1400, 1000))  # below the tab's head, right of its list
    colours = len(set(report.get_flattened_data()))
    check(colours >= 40, "the report's part of the screenshot is drawn (many colours)", colours)
    ours = [ln for ln in console if "Uncaught" in ln or "Refused" in ln or "/data/plugin" in ln]
    check(not ours, "the tab in TensorBoard: no script error, no blocked script", ours[:3])
    if os.environ.get("AGPROF_KEEP_TMP"):
        print("screenshot: %s" % png)


def main():
    try:
        import tensorboard  # noqa: F401
    except ImportError:
        print("skip tensorboard: no tensorboard module in %s (./setup installs it)" % sys.executable)
        sys.exit(77)
    check_entry_point()
    d = agtestlib.tmpdir("agprof-tb-")
    log = make_log_dir(d)
    if log is None:
        return
    srv = Server(log, d)
    try:
        if not check(srv.url, "TensorBoard started", srv.log()[-2000:]):
            return
        check_listing(srv, log)
        check_scalars(srv)
        check_swapped(log, d)
        findings = check_pages(srv, log)
        check_bad(srv)
        check_browser(srv, log, d, findings)
    finally:
        srv.stop()


if __name__ == "__main__":
    need_agprof(tensorflow=True)
    main()
    finish("python-tensorboard")
