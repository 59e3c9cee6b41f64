// The agprof tab: TensorBoard loads this module in the tab's iframe (base href plugin/agprof/)
// and calls render().  Left: the runs and their recordings, and per run two menus to diff two
// of them.  Right: the chosen recording's findings, then its HTML report (or the diff) in a
// sandboxed iframe: scripts only, no same origin, so the page cannot reach TensorBoard.
// Every name from the server goes into the page as text (textContent, URLSearchParams), never
// as markup.  The newest recording is shown first.

const STYLE = `
body{font:14px/1.4 Roboto,system-ui,sans-serif;margin:0;color:#202124;display:flex;height:100vh}
#side{width:280px;overflow:auto;border-right:1px solid #ddd;padding:8px;flex:none}
#main{flex:1;display:flex;flex-direction:column;min-width:0}
#head{padding:8px 12px;border-bottom:1px solid #ddd;max-height:35vh;overflow:auto}
h2{font-size:13px;margin:12px 0 4px;color:#555;word-break:break-all}
button.rec{display:block;width:100%;text-align:left;border:0;background:none;padding:3px 6px;cursor:pointer;
  font:inherit;word-break:break-all}
button.rec:hover,button.rec.on{background:#fde7d3}
.bad{color:#b00020}.dim{color:#777;font-size:12px}
select{max-width:120px}
#page{flex:1;border:0;width:100%}
ol{margin:4px 0;padding-left:22px}
`;

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}

function size(bytes) {
  return bytes >= 1 << 20 ? (bytes / (1 << 20)).toFixed(1) + " MB" : Math.ceil(bytes / 1024) + " kB";
}

// One line of text from the server: the error it gave, or what failed on the way.
async function fetchOk(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${r.status}: ${(await r.text()).trim()}`);
  return r;
}

class Tab {
  constructor() {
    this.side = el("div", {id: "side"});
    this.head = el("div", {id: "head"});
    this.page = el("iframe", {id: "page", sandbox: "allow-scripts", title: "agprof report"});
    document.body.append(el("style", {text: STYLE}), this.side,
                         el("div", {id: "main"}, this.head, this.page));
  }

  async load() {
    let runs;
    try {
      runs = await (await fetchOk("./recordings")).json();
    } catch (e) {
      return this.status("cannot list the recordings: " + e.message, true);
    }
    if (!runs.length) return this.status("No .agprof recordings under the log directory.", false);
    for (const run of runs) this.side.append(this.runBox(run));
    const all = runs.flatMap((r) => r.recordings.filter((x) => !x.error).map((x) => [r.run, x]));
    all.sort((a, b) => b[1].mtime - a[1].mtime);
    if (all.length) this.show(all[0][0], all[0][1].name);
  }

  runBox(run) {
    const box = el("div", {class: "run"}, el("h2", {text: run.run === "." ? "(log directory)" : run.run}));
    for (const rec of run.recordings) {
      const b = el("button", {class: "rec", "data-run": run.run, "data-name": rec.name},
                   rec.name, el("span", {class: rec.error ? "bad" : "dim",
                                          text: rec.error ? ` (${rec.error})` : ` ${size(rec.size)}`}));
      b.addEventListener("click", () => this.show(run.run, rec.name));
      box.append(b);
    }
    const readable = run.recordings.filter((r) => !r.error).map((r) => r.name);
    if (readable.length >= 2) box.append(this.diffForm(run.run, readable));
    return box;
  }

  diffForm(run, names) {
    const menu = (pick) => el("select", {}, ...names.map((name, i) =>
      el("option", i === pick ? {selected: ""} : {}, name)));
    const base = menu(0), next = menu(1);
    const go = el("button", {text: "diff"});
    go.addEventListener("click", () => this.diff(run, base.value, next.value));
    return el("div", {class: "dim"}, "base ", base, " new ", next, " ", go);
  }

  status(text, bad) {
    this.head.replaceChildren(el("div", {id: "agprof-status", class: bad ? "bad" : "", text}));
    this.page.removeAttribute("src");
  }

  mark(run, name) {
    for (const b of this.side.querySelectorAll("button.rec"))
      b.classList.toggle("on", b.dataset.run === run && b.dataset.name === name);
  }

  async show(run, name) {
    this.mark(run, name);
    const q = new URLSearchParams({run, name}).toString();
    this.status(`Analysing ${name}...`, false);
    let got;
    try {
      got = await (await fetchOk("./findings?" + q)).json();
    } catch (e) {
      return this.status(`${name}: ${e.message}`, true);
    }
    const list = el("ol", {id: "agprof-findings"}, ...got.findings.map((f) =>
      el("li", {class: "finding", text: `${f.severity} ${f.rule}` + (f.function ? ` ${f.function}` : "") +
                (f.cause ? ` [${f.cause}]` : "") + (f.location ? ` at ${f.location.file}:${f.location.line}` : "") +
                `: ${f.message}`})));
    const s = got.session;
    this.head.replaceChildren(
      el("div", {id: "agprof-status", text: `${run === "." ? "" : run + "/"}${name}: ${got.findings.length} ` +
                 `finding(s), ${s.traces} traces, ${s.function_calls} graph calls`}), list);
    this.page.src = "./report?" + q;
  }

  async diff(run, base, next) {
    const q = new URLSearchParams({run, base, new: next}).toString();
    this.mark(run, null);
    this.status(`Comparing ${base} and ${next}...`, false);
    try {
      await fetchOk("./diff?" + q);  // the page is kept by the server: the iframe's load is quick
    } catch (e) {
      return this.status(`diff ${base} ${next}: ${e.message}`, true);
    }
    this.head.replaceChildren(el("div", {id: "agprof-status", text: `diff ${base} -> ${next} (${run})`}));
    this.page.src = "./diff?" + q;
  }
}

export async function render() {
  await new Tab().load();
}
