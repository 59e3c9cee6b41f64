"""Kernels inside graph calls (issue 10) on real TensorFlow runs.

usage: test_kernels.py fused|dispatch|matmuls|slow_op|no_kernels|totals|all|budget|large|cut

The oracle of counts: by default (run --kernels=sampled) agprof counts
every kernel execution (kernel_totals) and records one by one (kernels)
only the kernels of sampled calls: per thread and graph function its first
5 calls, then the first call to start at least 256 times its pace after
the last sampled call's end (the pace: that call's duration, at most twice
the pace before it) (a budget of time: function_calls.kernel_detail;
the test replays the rule on the recorded call times).  So every call that
is sampled must hold exactly the FunctionDef's kernels, every other call
none, and each node of the function must have run once per call, the
calls counted by the program itself, and timed once per sampled call.

- dispatch (samples/graph_dispatch.py): every sampled call of tiny_steps ran the
  kernels TensorFlow's executor runs for its FunctionDef (the oracle,
  samples/oracle.py executed_kernels(): nodes minus Const, whose tensor the
  executor hands over without running a kernel, minus the Identity nodes
  grappler prunes, plus one _Arg per input and one _Retval per output); each
  kernel is linked to its call and to its graph node, whose creation line is
  the sample's loop body; graph-dispatch-bound fires on tiny_steps at the
  marked line, not on the jit_compile=True twin, and its saving estimate is
  within 3x of the saving the sample measured itself by running the
  twin (median call times, its own clock).
- matmuls (samples/graph_matmuls.py): kernels per call against the oracle
  too; no rule fires at all; `agprof report --ops` shows them in 80 columns.
- slow_op (samples/graph_slow_op.py): slow-op names TopKV2 at the marked
  line; `agprof export --format chrome` has every kernel, with its line.
- fused (samples/graph_fused_conv.py): the fused Conv2D+BiasAdd+Relu kernel is
  named for the ops it fuses (not Relu, the node it is named after): no slow-op.
- no_kernels: `agprof run --no-kernels` records no kernel and says why.
- totals (samples/graph_counted.py, 1 s of calls): detail for exactly
  calls 1-5 and those the time budget picks; every node's
  executions = the program's call count; the
  report's kernels per call and op runs come from the totals.
- all: the same sample under `--kernels=all`: every call in detail.
- budget: the same sample under `--kernels=all --max-events 1000`: the
  calls before the budget ran out are in detail (each with all its
  kernels), the later ones counted only, and the kernels stored plus those
  refused (meta kernels_refused) are every kernel counted.
- large (samples/graph_counted.py --large): a function of more kernels than a
  thread's kernel cache has slots, so that every call evicts some: every
  node's executions = the program's call count all the same, and its
  timed executions = the sampled calls.
- cut (samples/graph_counted.py --long): a while loop of some 400,000
  kernels a call: each sampled call's detail is cut past 65,536 kernels on
  a thread (AGP_KDETAIL_CALL_MAX), so none of its kernels is stored one by
  one and it is not marked kernel_detail (all or none), meta
  kernel_cut_calls counts them; the loop body's Mul ran LOOP times a call
  by the totals all the same; small_steps' first 5 calls, before it, are
  detailed, each with all its kernels.  (The long calls' records before
  the cut outrun the launcher: processes.dropped_kernels, of rows that are
  not kept anyway.)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agtest import (agprof_cmd, check, check_eq, finish, marker_lines, need_agprof,  # noqa: E402
                    q1, run_sample_recorded, tmpdir, PYTHON, sample, open_recording)
import agtest  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402


def report(path):
    rc, out, err = agprof_cmd("report", "--format", "json", path)
    check_eq(rc, 0, "agprof report --format json exit status (%s)" % err.strip()[-300:])
    return json.loads(out) if rc == 0 else {"findings": [], "graph_ops": {"functions": []}}


KDETAIL_FIRST, KDETAIL_GAP = 5, 256  # collector.h


def sampled(calls, every_call):
    """Which of a function's calls (pid, tid, start_ns, end_ns) the collector samples (collector.h,
    agp_call_detailed): on each thread its first 5, then the first to start at least 256 times the
    pace after the last sampled call's end (the pace: that call's duration, at most twice the pace
    before it), from the very times the recording holds."""
    first, nxt, pace, out = {}, {}, {}, []
    for pid, tid, start, end in calls:
        key = (pid, tid)
        first[key] = first.get(key, 0) + 1
        detail = every_call or first[key] <= KDETAIL_FIRST or start >= nxt.get(key, 0)
        if detail:
            dur = max(end - start, 1)
            pace[key] = min(dur, 2 * pace[key]) if key in pace else dur
            nxt[key] = end + KDETAIL_GAP * pace[key]
        out.append(detail)
    return out


def check_node_totals(db, oracle, fn, sampled_calls):
    """Every node of fn ran once per call of the program's count and was timed once per sampled call (kernel_totals)."""
    want, calls = oracle["extra"]["function_defs"][fn], oracle["functions"][fn]["calls"]
    per_node = db.execute("SELECT t.node_id, sum(t.count), sum(t.timed) FROM kernel_totals t JOIN graph_functions g"
                          " ON g.id = t.graph_function_id JOIN strings s ON s.id = g.name_id WHERE s.text = ?"
                          " GROUP BY t.node_id", (want["name"],)).fetchall()
    return all([check_eq(len(per_node), want["kernels"],
                         "%s: nodes with kernel totals vs the FunctionDef's executed nodes" % fn),
                check_eq(sorted({n for _, n, _ in per_node}), [calls],
                         "%s: executions per node (kernel_totals) vs calls" % fn),
                check_eq(sorted({n for _, _, n in per_node}), [sampled_calls],
                         "%s: timed executions per node (kernel_totals.timed) vs the sampled calls" % fn)])


def totals_by_thread(db):
    """Where a recording's kernel counts went, thread by thread: what a failed exact-count check needs to be read."""
    lines = ["kernel totals by thread (tid role: rows, executions, executions of no graph function; sampled calls"
             " on it by their kernels):"]
    for tid, role, rows, count, unlinked in db.execute(
            "SELECT t.tid, h.role, count(*), sum(t.count), sum(CASE WHEN t.graph_function_id IS NULL THEN t.count END)"
            " FROM kernel_totals t LEFT JOIN threads h ON h.pid = t.pid AND h.tid = t.tid GROUP BY t.pid, t.tid"):
        calls = db.execute("SELECT group_concat(call_id || ':' || n) FROM (SELECT call_id, count(*) n FROM kernels"
                           " WHERE tid = ? GROUP BY call_id)", (tid,)).fetchone()[0]
        lines.append("  %s %s: %s rows, %s executions, %s unlinked; %s" % (tid, role, rows, count, unlinked, calls))
    lines.append("  processes (pid, dropped_events, dropped_kernels): %s" % db.execute(
        "SELECT pid, dropped_events, dropped_kernels FROM processes").fetchall())
    return "\n".join(lines)


def check_kernels_per_call(db, oracle, fn, every_call=False, later=False):
    """Every sampled call of fn ran the oracle's kernels, each linked to a node of fn's graph,
    the other calls none; every node of fn ran once per call (kernel_totals)."""
    want = oracle["extra"]["function_defs"][fn]
    calls = oracle["functions"][fn]["calls"]
    check_eq(q1(db, "SELECT sum(dropped_kernels) FROM processes"), 0, "dropped_kernels (exact counts need 0)")
    rows = db.execute("SELECT c.id, c.kernel_detail, count(k.id), c.pid, c.tid, c.start_ns, c.end_ns FROM function_calls c"
                      " JOIN strings s ON s.id = c.name_id LEFT JOIN kernels k ON k.call_id = c.id WHERE s.text = ?"
                      " GROUP BY c.id ORDER BY c.start_ns, c.id", (want["name"],)).fetchall()
    check_eq(len(rows), calls, "%s: recorded calls vs the program's count" % fn)
    expect = sampled([r[3:7] for r in rows], every_call)
    check_eq([i for i, r in enumerate(rows) if r[1]], [i for i in range(len(rows)) if expect[i]],
             "%s: the calls marked kernel_detail" % fn)
    check(every_call or sum(expect) < len(rows), "%s: some calls not sampled (%d of %d)" % (fn, sum(expect), len(rows)))
    if later:  # how many the time budget picked depends on the machine's speed (its calls' durations)
        print("%s: %d of %d calls sampled, %d by the time budget" % (fn, sum(expect), len(rows), sum(expect) - KDETAIL_FIRST))
    rows = [r[:3] for r in rows]
    check_eq(sorted({n for _, d, n in rows if d}), [want["kernels"]],
             "%s: kernels per sampled call vs the FunctionDef's executed nodes" % fn)
    check_eq(sorted({n for _, d, n in rows if not d}), [0] if calls > len([r for r in rows if r[1]]) else [],
             "%s: kernel rows of calls not sampled" % fn)
    check_node_totals(db, oracle, fn, len([r for r in rows if r[1]]))
    unlinked = q1(db, "SELECT count(*) FROM kernels k JOIN function_calls c ON c.id = k.call_id"
                      " JOIN strings s ON s.id = c.name_id LEFT JOIN graph_nodes n ON n.id = k.node_id"
                      " JOIN graph_functions g ON g.id = c.graph_function_id"
                      " WHERE s.text = ? AND n.op_type NOT IN ('_Arg', '_Retval')"
                      " AND n.graph_function_id IS NOT g.id", want["name"])
    check_eq(unlinked, 0, "%s: kernels of its calls not linked to a node of its graph" % fn)


def findings_of(rep, rule):
    return [f for f in rep["findings"] if f["rule"] == rule]


def test_dispatch():
    proc, db, oracle = run_sample_recorded("graph_dispatch.py")
    check_eq(proc.returncode, 0, "agprof run exit status")
    check_kernels_per_call(db, oracle, "tiny_steps")
    body = marker_lines("graph_dispatch.py")["graph-dispatch-bound"][0]
    lines = db.execute("SELECT DISTINCT n.line FROM graph_nodes n JOIN graph_functions g ON g.id = n.graph_function_id"
                       " JOIN strings s ON s.id = g.name_id WHERE s.text = ? AND n.op_type IN ('Mul', 'AddV2')",
                       (oracle["extra"]["function_defs"]["tiny_steps"]["name"],)).fetchall()
    check_eq([r[0] for r in lines], [body], "creation line of tiny_steps's Mul/AddV2 nodes")
    check_eq(q1(db, "SELECT kernel_status FROM processes WHERE pid = ?", oracle["pid"]), "hooked", "kernel_status")
    rep = report(agtest.last_recording)
    found = findings_of(rep, "graph-dispatch-bound")
    check_eq([(f["function"], f["location"]["line"]) for f in found], [("tiny_steps", body)],
             "graph-dispatch-bound findings (function, line); never the jit_compile twin")
    if found:
        x = oracle["extra"]
        measured = (x["plain_call_ns"] - x["xla_call_ns"]) * x["timed_calls"]
        # the advice is an experiment (issue 46): no saving is claimed; the rule's cost is its estimate
        check_eq(found[0]["saving_ns"], 0, "graph-dispatch-bound claims no saving (an experiment)")
        estimate = found[0]["cost_ns"]
        print("jit_compile saving: estimated %.1f ms (the finding's cost), measured %.1f ms"
              % (estimate / 1e6, measured / 1e6))
        # The estimate is the executor overhead XLA removes; the measured saving
        # also holds what XLA adds (its own per-call cost) and the machine's
        # noise between the two timed loops: a factor of 3 either way.
        check(measured / 3 <= estimate <= measured * 3,
              "the cost's estimate within 3x of the measured jit_compile saving", estimate, measured)
    check_overhead_se(agtest.last_recording, db, oracle["extra"]["function_defs"]["tiny_steps"]["name"])
    fns = {f["function"]: f for f in rep["graph_ops"]["functions"]}
    check_eq(fns.get("tiny_steps", {}).get("kernels_per_call"),
             oracle["extra"]["function_defs"]["tiny_steps"]["kernels"], "graph_ops kernels_per_call")
    check_eq(fns.get("tiny_steps_xla", {}).get("jit_compile"), True, "graph_ops: the twin is jit_compile")


SE_PROBE = """id: probe-share
title: tiny_steps's overhead share and its standard error
severity: info
select: graph_functions
when: function == "tiny_steps"
message: share={overhead_share} se={overhead_share_se}
recommendation: -
"""


def check_overhead_se(rec, db, name):
    """overhead_share_se against the recorded calls (their own shares' spread, the first call left out), and
    graph-dispatch-bound's min_share set within 2 of them of the share: borderline, so info (issue 46)."""
    rows = db.execute("SELECT c.id, c.start_ns, c.end_ns, k.start_ns, k.end_ns FROM kernels k JOIN function_calls c"
                      " ON c.id = k.call_id JOIN graph_functions g ON g.id = c.graph_function_id JOIN strings s"
                      " ON s.id = g.name_id WHERE s.text = ? ORDER BY c.id, k.start_ns", (name,)).fetchall()
    calls = {}
    for cid, cs, ce, ks, ke in rows:
        calls.setdefault(cid, (cs, ce, []))[2].append((max(ks, cs), min(ke, ce)))
    shares = []
    for cid in sorted(calls)[1:]:  # the first call instantiates: left out
        cs, ce, spans = calls[cid]
        busy, cur = 0, None
        for a, b in spans:
            if cur and a <= cur[1]:
                cur = (cur[0], max(cur[1], b))
                continue
            busy += cur[1] - cur[0] if cur else 0
            cur = (a, b)
        busy += cur[1] - cur[0] if cur else 0
        if ce > cs:
            shares.append((ce - cs - min(busy, ce - cs)) / (ce - cs))
    want = statistics.stdev(shares) / len(shares) ** 0.5 if len(shares) > 1 else 0
    rules = os.path.join(tmpdir(), "probe-rules")
    os.makedirs(rules, exist_ok=True)
    with open(os.path.join(rules, "probe.rule"), "w") as fh:
        fh.write(SE_PROBE)
    rc, out, err = agprof_cmd("report", "--format", "json", "--rules", rules, rec)
    probe = [f for f in json.loads(out)["findings"] if f["rule"] == "probe-share"] if rc == 0 else []
    if not check(len(probe) == 1, "the probe rule reads tiny_steps's row", err[-300:]):
        return
    got = dict(kv.split("=", 1) for kv in probe[0]["message"].split())
    share, se = float(got["share"]), float(got["se"])
    print("tiny_steps overhead_share %.4f, overhead_share_se %.5f (%d calls; recomputed %.5f)" % (
        share, se, len(shares), want))
    check(want > 0 and abs(se - want) <= 0.02 * want + 1e-6, "overhead_share_se is the calls' shares' spread",
          se, want)
    # min_share one standard error above the share: the comparison is open, the finding borderline (info)
    rc, out, err = agprof_cmd("report", "--format", "json", "--set", "graph-dispatch-bound.min_share=%.6f"
                              % (share + se), rec)
    found = findings_of(json.loads(out), "graph-dispatch-bound") if rc == 0 else []
    check(found and found[0]["severity"] == "info" and "borderline" in found[0]["message"],
          "min_share within 2 standard errors of overhead_share: borderline, info", found)


def test_matmuls():
    proc, db, oracle = run_sample_recorded("graph_matmuls.py")
    check_eq(proc.returncode, 0, "agprof run exit status")
    check_kernels_per_call(db, oracle, "dense_chain")
    rep = report(agtest.last_recording)
    check_eq([f["rule"] for f in rep["findings"]], [], "findings on a graph of a few large matmuls")
    rc, text, err = agprof_cmd("report", "--ops", agtest.last_recording)
    check_eq(rc, 0, "agprof report --ops exit status (%s)" % err.strip()[-300:])
    check("Kernels inside graph calls" in text and "dense_chain" in text, "report --ops shows dense_chain's kernels",
          text[-600:], "a graph ops section")
    check_eq([l for l in text.splitlines() if len(l) > 80], [], "report --ops lines wider than 80 columns")
    fn = [f for f in rep["graph_ops"]["functions"] if f["function"] == "dense_chain"]
    check(fn and fn[0]["overhead_share"] < 0.35, "dense_chain's executor overhead share is small",
          fn[0]["overhead_share"] if fn else None, "< 35%")
    check_descheduled(agtest.last_recording, oracle)


def check_descheduled(path, oracle):
    """A loaded machine descheduling one kernel (here one Relu run of a sampled call, not the first, made
    300 ms longer, as the collector would have timed it) is no slow op: only the sampled calls are timed, and
    their mean times every run of the node made Relu most of dense_chain's kernel time (CI's GPflow SVGP at
    load 16); each node at its median run, it is not."""
    db = open_recording(path)
    name = oracle["extra"]["function_defs"]["dense_chain"]["name"]
    row = db.execute("SELECT k.id, k.node_id, k.call_id FROM kernels k JOIN function_calls c ON c.id = k.call_id"
                     " JOIN strings s ON s.id = c.name_id JOIN graph_nodes n ON n.id = k.node_id"
                     " WHERE s.text = ? AND n.op_type = 'Relu' AND c.id > (SELECT min(call_id) FROM kernels"
                     " WHERE call_id IN (SELECT id FROM function_calls WHERE name_id = c.name_id))"
                     " ORDER BY k.id LIMIT 1", (name,)).fetchone()
    check(row is not None, "a Relu kernel of a sampled call after the first", row, "a kernels row")
    if row is None:
        return
    late = 300 * 1000 * 1000

    def deschedule(db):
        db.execute("UPDATE kernels SET end_ns = end_ns + ? WHERE id = ?", (late, row[0]))
        db.execute("UPDATE kernel_totals SET timed_ns = timed_ns + ? WHERE rowid = (SELECT min(rowid)"
                   " FROM kernel_totals WHERE node_id = ? AND timed > 0)", (late, row[1]))
    rep = report(agtest.agtestlib.edited_copy(path, os.path.join(tmpdir(), "descheduled.agprof"), deschedule))
    fn = [f for f in rep["graph_ops"]["functions"] if f["function"] == "dense_chain"]
    types = {t["op_type"]: t["total_ns"] for t in fn[0].get("op_types", [])} if fn else {}
    types = {k: v / max(sum(types.values()), 1) for k, v in types.items()}
    check(types.get("Relu", 0) >= 0.5, "the descheduled Relu run is most of dense_chain's mean-based kernel time",
          types.get("Relu"), ">= 50% (else this check tests nothing)")
    check_eq([f["rule"] for f in rep["findings"]], [], "findings with one Relu run descheduled for 300 ms")


def test_slow_op():
    proc, db, oracle = run_sample_recorded("graph_slow_op.py")
    check_eq(proc.returncode, 0, "agprof run exit status")
    rep = report(agtest.last_recording)
    line = marker_lines("graph_slow_op.py")["slow-op"][0]
    found = [(f["function"], f["location"]["line"], "TopKV2" in f["message"]) for f in findings_of(rep, "slow-op")]
    check_eq(found, [("rank_scores", line, True)], "slow-op findings (function, line, names TopKV2)")
    # the Chrome export has every kernel, the TopKV2 ones with the line that created them
    out = os.path.join(tmpdir(), "trace.json")
    rc, _, err = agprof_cmd("export", "--format", "chrome", "-o", out, agtest.last_recording)
    check_eq(rc, 0, "agprof export exit status (%s)" % err.strip()[-300:])
    events = json.load(open(out))["traceEvents"] if rc == 0 else []
    kernels = [e for e in events if e.get("cat") == "kernel"]
    check_eq(len(kernels), q1(db, "SELECT count(*) FROM kernels"), "kernel events in the Chrome export")
    topk = {e["args"].get("created_at", "").rsplit(":", 1)[-1] for e in kernels if e["args"]["op_type"] == "TopKV2"}
    check_eq(topk, {str(line)}, "created_at of the TopKV2 kernel events")


def test_fused():
    """A fused Conv2D+BiasAdd+Relu kernel is named for what it fuses, not for the node it is named after."""
    proc, db, oracle = run_sample_recorded("graph_fused_conv.py")
    check_eq(proc.returncode, 0, "agprof run exit status")
    rep = report(agtest.last_recording)
    fn = [f for f in rep["graph_ops"]["functions"] if f["function"] == "conv_fn"]
    types = fn[0]["op_types"] if fn else []
    check(types and types[0]["op_type"].startswith("Conv2D"), "conv_fn's kernel time is named for the convolution",
          [t["op_type"] for t in types])
    fused = q1(db, "SELECT count(*) FROM graph_nodes WHERE op_type LIKE '%Fused%Conv2D'")
    if fused:
        check_eq(types[0]["op_type"], "Conv2D+BiasAdd+Relu", "the fused kernel's name")
    check_eq(findings_of(rep, "slow-op"), [], "no slow-op finding on a fused convolution")


def test_no_kernels():
    out = os.path.join(tmpdir(), "nok.agprof")
    proc = subprocess.run([agtest.AGPROF, "run", "--no-kernels", "-o", out, "--", PYTHON, sample("graph_matmuls.py")],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=240)
    check_eq(proc.returncode, 0, "agprof run --no-kernels exit status")
    db = open_recording(out)
    check_eq(q1(db, "SELECT count(*) FROM kernels"), 0, "kernels recorded with --no-kernels")
    check_eq(q1(db, "SELECT count(*) FROM function_calls"), 20, "graph calls are still recorded")
    check_eq(q1(db, "SELECT kernel_status FROM processes ORDER BY pid LIMIT 1"), "off", "kernel_status")


def check_counted(every_call):
    args = ["--kernels=all"] if every_call else []
    proc, db, oracle = run_sample_recorded("graph_counted.py", agprof_args=args)
    check_eq(proc.returncode, 0, "agprof run exit status")
    check_kernels_per_call(db, oracle, "small_steps", every_call, later=not every_call)
    want = oracle["extra"]["function_defs"]["small_steps"]["kernels"]
    fns = {f["function"]: f for f in report(agtest.last_recording)["graph_ops"]["functions"]}
    fn = fns.get("small_steps", {})
    # the first call (it also instantiates the function) is left out of the report's sums
    check_eq(fn.get("calls"), oracle["functions"]["small_steps"]["calls"] - 1, "graph_ops calls (all but the first)")
    check_eq(fn.get("kernels_per_call"), want, "graph_ops kernels_per_call")
    check_eq(sorted({o["count"] for o in fn.get("ops", [])}), [fn.get("calls")], "graph_ops: runs of each op")


def test_totals():
    check_counted(False)


def test_all():
    check_counted(True)


def test_budget():
    budget = 1000
    proc, db, oracle = run_sample_recorded("graph_counted.py", agprof_args=["--kernels=all", "--max-events", str(budget)])
    check_eq(proc.returncode, 0, "agprof run exit status")
    want = oracle["extra"]["function_defs"]["small_steps"]["kernels"]
    rows = q1(db, "SELECT count(*) FROM kernels")
    refused = int(q1(db, "SELECT value FROM meta WHERE key = 'kernels_refused'") or 0)
    counted = q1(db, "SELECT sum(count) FROM kernel_totals")
    check_eq(q1(db, "SELECT sum(dropped_kernels) FROM processes"), 0, "dropped_kernels")
    # past the budget a call already begun keeps its kernels: how many the
    # rings held when it ran out depends on how far the launcher's reading
    # lagged (CI under load: 13 calls of 42), so the bound is on time: no call
    # that began after the launcher ran out of budget is stored one by one
    capped_ns = int(q1(db, "SELECT value FROM meta WHERE key = 'kernels_capped_ns'") or 0)
    check(rows >= budget, "kernels stored one by one: %d, budget %d" % (rows, budget))
    late = q1(db, "SELECT count(*) FROM function_calls WHERE kernel_detail AND start_ns >= ?", capped_ns)
    check(capped_ns > 0 and late == 0, "detailed calls begun after the budget ran out (meta kernels_capped_ns %d): %d"
          % (capped_ns, late))
    check(refused > 0, "kernels past the budget counted only (meta kernels_refused %d)" % refused)
    check_eq(rows + refused, counted, "kernels stored + refused = every kernel counted (kernel_totals)")
    per_call = db.execute("SELECT c.kernel_detail, (SELECT count(*) FROM kernels k WHERE k.call_id = c.id) "
                          "FROM function_calls c ORDER BY c.start_ns").fetchall()
    detail = [d for d, _ in per_call]
    n = sum(detail)
    check(0 < n < len(per_call) and detail == [1] * n + [0] * (len(per_call) - n),
          "detailed calls are the first %d of %d" % (n, len(per_call)))
    check_eq({k for d, k in per_call if d}, {want}, "kernels of each detailed call (the FunctionDef's)")
    check_eq({k for d, k in per_call if not d}, {0}, "kernels of the calls past the budget")
    rc, out, _ = agprof_cmd("report", "--ops", agtest.last_recording)
    check("%d kernels past --max-events" % refused in out, "report --ops says how many were counted only")


def test_large():
    proc, db, oracle = run_sample_recorded("graph_counted.py", args=["--large"])
    check_eq(proc.returncode, 0, "agprof run exit status")
    check(oracle["extra"]["function_defs"]["small_steps"]["kernels"] > 8192, "more kernels than the cache's slots")
    # the sampled calls' records may be dropped here (5 calls of 8,402 kernels in a few ms outrun the launcher's
    # writer: processes.dropped_kernels), their counts never: an evicted slot's totals go to the ring first
    if not check_node_totals(db, oracle, "small_steps",
                             q1(db, "SELECT count(*) FROM function_calls WHERE kernel_detail")):
        print(totals_by_thread(db), file=sys.stderr)


def test_cut():
    proc, db, oracle = run_sample_recorded("graph_counted.py", args=["--long"])
    check_eq(proc.returncode, 0, "agprof run exit status")
    want = oracle["extra"]["function_defs"]["small_steps"]
    small = db.execute("SELECT c.kernel_detail, (SELECT count(*) FROM kernels k WHERE k.call_id = c.id)"
                       " FROM function_calls c JOIN strings s ON s.id = c.name_id WHERE s.text = ? ORDER BY c.start_ns",
                       (want["name"],)).fetchall()
    check_eq(len(small), oracle["functions"]["small_steps"]["calls"], "small_steps: recorded calls")
    # its calls ran before the long ones, with the rings empty: none of their kernels dropped
    check_eq([tuple(r) for r in small[:KDETAIL_FIRST]], [(1, want["kernels"])] * KDETAIL_FIRST,
             "small_steps' first 5 calls: (kernel_detail, kernels), each its FunctionDef's")
    calls = oracle["functions"]["long_loop"]["calls"]
    rows = db.execute("SELECT c.kernel_detail, (SELECT count(*) FROM kernels k WHERE k.call_id = c.id)"
                      " FROM function_calls c JOIN strings s ON s.id = c.name_id WHERE s.text LIKE '%long_loop%'"
                      " ORDER BY c.start_ns").fetchall()
    check_eq(len(rows), calls, "long_loop: recorded calls vs the program's count")
    check_eq([tuple(r) for r in rows], [(0, 0)] * calls, "long_loop calls: (kernel_detail, kernel rows), all cut")
    check_eq(int(q1(db, "SELECT value FROM meta WHERE key = 'kernel_cut_calls'") or 0), calls,
             "meta kernel_cut_calls: every long_loop call was sampled (its first 5) and cut")
    check_eq(q1(db, "SELECT sum(t.count) FROM kernel_totals t JOIN graph_nodes n ON n.id = t.node_id"
                    " WHERE n.op_type = 'Mul' AND t.graph_function_id IN (SELECT g.id FROM graph_functions g"
                    " JOIN strings s ON s.id = g.name_id WHERE s.text LIKE '%long_loop%')"),
             oracle["extra"]["loop"] * calls, "the loop body's Mul executions (kernel_totals) vs LOOP x calls")


TESTS = {"fused": test_fused, "dispatch": test_dispatch, "matmuls": test_matmuls, "slow_op": test_slow_op, "no_kernels": test_no_kernels,
         "totals": test_totals, "all": test_all, "budget": test_budget, "large": test_large,
         "cut": test_cut}

if __name__ == "__main__":
    need_agprof()
    TESTS[sys.argv[1]]()
    finish("kernels-" + sys.argv[1])
