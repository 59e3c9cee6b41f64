"""A real 2-worker MultiWorkerMirroredStrategy job on localhost, recorded
under `agprof run -o DIR/job-%r.agprof` on each worker, then merged.

Both workers run samples/multiworker.py with a TF_CONFIG of two loopback
ports chosen free at test time; worker 1 sleeps before every other step
(MW_STRAGGLER=1), worker 0 retraces `train_step` once (MW_RETRACE=0).
The oracle of each worker is its own count (samples/oracle.py:
experimental_get_tracing_count() and a Python-side call counter).

Checks: each recording's meta holds its task (TF_CONFIG) and its trace and
call counts equal its worker's; the merge has one rank per worker with the
same counts per rank, strings unique, and the clocks of one host kept
(offset 0) or, with --clock steps, estimated within 50 ms of 0 (the true
offset on one host) and, for a copy of worker 1 moved to another host
whose clock is 5 s ahead, estimated from the collectives matched by their
keys within 50 ms of -5 s; collectives (check_collectives): every one
recorded with its group/instance keys on both workers (group size = the
cluster's), the same (group, instance, occurrence) triples on both, as many
graph collectives as the kernel hook saw collective kernels, and the
graph all-reduces' spans (dispatch to done) holding the planted wait on the
fast worker 0 and not on the sleeping worker 1; `agprof report` on the merge has one summary row per
rank with its worker's counts, and its rules find the planted problems:
straggler (rank 1, doing something outside TensorFlow), rank-retrace (rank
0, a Python value), collective-wait (rank 0 waiting for rank 1), none of
them on a single worker's recording, and straggler and collective-wait
still on a merge made before schema 5 (no collective_execs); `agprof view`
shows one process group per rank, in rank order, and, for a graph
all-reduce found by search, its keys in the details and (key c) the same
collective on the other rank; recordings of different schema
versions are refused (exit 2).  The job is bounded (JOB_TIMEOUT) and its processes are killed
when it fails.
"""
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import AGPROF, PYTHON, check, check_eq, q1  # noqa: E402

JOB_TIMEOUT = 120  # seconds for the whole job (it takes ~15 s on 2 loaded cores)


def free_ports(n):
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def run_job(d, env_extra):
    """Start both workers under agprof; return [(exit status, oracle)] per task."""
    ports = free_ports(2)
    cluster = {"worker": ["127.0.0.1:%d" % p for p in ports]}
    procs = []
    for i in range(2):
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", AGPROF_ORACLE=os.path.join(d, "oracle-%d.json" % i),
                   TF_CONFIG=json.dumps({"cluster": cluster, "task": {"type": "worker", "index": i}}), **env_extra)
        log = open(os.path.join(d, "worker-%d.log" % i), "wb")
        procs.append(subprocess.Popen([AGPROF, "run", "-q", "-o", os.path.join(d, "job-%r.agprof"), "--",
                                       PYTHON, agtest.sample("multiworker.py")],
                                      env=env, stdout=log, stderr=subprocess.STDOUT, cwd=agtest.SOURCE_ROOT,
                                      start_new_session=True))
        log.close()
    deadline = time.monotonic() + JOB_TIMEOUT
    try:
        for p in procs:
            p.wait(timeout=max(1, deadline - time.monotonic()))
    finally:
        for p in procs:  # a worker whose peer failed waits forever at its collective
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    out = []
    for i, p in enumerate(procs):
        if p.returncode != 0:
            with open(os.path.join(d, "worker-%d.log" % i), "rb") as fh:
                sys.stdout.write(fh.read().decode("utf-8", "replace")[-3000:])
            agtest.agtestlib.die("worker %d exited %d" % (i, p.returncode))
        with open(os.path.join(d, "oracle-%d.json" % i)) as fh:
            out.append(json.load(fh))
    return out


TRACES = ("SELECT count(*) FROM traces t JOIN functions f ON f.id = t.function_id"
          " JOIN strings s ON s.id = f.name_id WHERE s.text = 'train_step'")
CALLS = ("SELECT count(*) FROM function_calls c JOIN graph_functions g ON g.id = c.graph_function_id"
         " JOIN functions f ON f.id = g.function_id JOIN strings s ON s.id = f.name_id WHERE s.text = 'train_step'")


def by_rank(sql, rank):
    return sql.replace("WHERE", "JOIN processes p ON p.pid = f.pid WHERE p.rank = %d AND" % rank)


def check_workers(d, oracles):
    for i, o in enumerate(oracles):
        db = agtest.open_recording(os.path.join(d, "job-%d.agprof" % i))
        agtest.check_recording_header(db)
        m = agtest.meta(db)
        check_eq(m.get("tf_task_type"), "worker", "meta.tf_task_type of task %d" % i)
        check_eq(m.get("tf_task_index"), str(i), "meta.tf_task_index of task %d" % i)
        check_eq(m.get("tf_cluster_size"), "2", "meta.tf_cluster_size of task %d" % i)
        f = o["functions"]["train_step"]
        check_eq(q1(db, TRACES), f["tracing_count"], "traces of train_step on task %d" % i)
        check_eq(q1(db, CALLS), f["calls"], "calls of train_step on task %d" % i)
        db.close()
    check_eq([o["functions"]["train_step"]["tracing_count"] for o in oracles], [2, 1],
             "the planted retrace (task 0 only), by TensorFlow's count")


KEYED = ("SELECT group_key, instance_key, row_number() OVER (PARTITION BY group_key, instance_key ORDER BY start_ns)"
         " FROM collective_execs WHERE group_key IS NOT NULL ORDER BY 1, 2, 3")
# every kernel execution is counted in kernel_totals (kernels holds the sampled calls' only); the
# graph's are those of a call (the eager broadcasts' kernels belong to none: they are graph = 0 rows)
COLLECTIVE_KERNELS = ("SELECT coalesce(sum(k.count), 0) FROM kernel_totals k JOIN graph_nodes n ON n.id = k.node_id"
                      " WHERE n.op_type LIKE 'Collective%' AND k.call_id IS NOT NULL")
SLEEP_MS = 300


def check_collectives(d, oracles):
    keys, spans = {}, {}
    for i, o in enumerate(oracles):
        db = agtest.open_recording(os.path.join(d, "job-%d.agprof" % i))
        rows = db.execute("SELECT graph, group_size, group_key, instance_key, key_status, end_ns - start_ns"
                          " FROM collective_execs ORDER BY start_ns").fetchall()
        graph = [r for r in rows if r[0] == 1]
        check(len(graph) >= o["functions"]["train_step"]["calls"],
              "task %d: at least one graph collective per step" % i, len(graph))
        check(len(rows) > len(graph), "task %d: eager collectives too (MWMS broadcasts the variables)" % i, rows)
        check_eq(len(graph), q1(db, COLLECTIVE_KERNELS), "task %d: graph collectives = collective kernels" % i)
        check_eq([r[4] for r in rows if r[4] is not None], [], "task %d: collectives whose keys were not read" % i)
        check_eq(sorted(set(r[1] for r in rows)), [2], "task %d: group size = the cluster's (TF_CONFIG)" % i)
        keys[i] = db.execute(KEYED).fetchall()
        # the first graph collective waits for the other's start-up: left out
        spans[i] = [r[5] for r in graph][1:]
        db.close()
    check_eq(keys[0], keys[1], "the same (group, instance, occurrence) on both workers")
    # worker 1 sleeps SLEEP_MS before every other step: worker 0's all-reduces of those steps wait for it
    # (a dispatch-only span would be microseconds); worker 1's wait at most once, for worker 0's retrace
    steps = oracles[0]["extra"]["steps"]
    long_ns = SLEEP_MS * 1000000 * 2 // 3
    check(len([x for x in spans[0] if x > long_ns]) >= steps // 2,
          "worker 0's graph all-reduces hold its waits for the sleeping worker 1", spans[0], steps // 2)
    check(len([x for x in spans[1] if x > long_ns]) <= 1, "worker 1's all-reduces hardly wait", spans[1])
    return len(keys[0])



def merge_with_clock(d, method):
    """Both workers merged with --clock METHOD: rank 1's (clock_method, clock_offset_ns, clock_matches)."""
    job = os.path.join(d, "job-%s.agprof" % method)
    rc, out, err = agtest.agprof_cmd("merge", "--clock", method, "-o", job, os.path.join(d, "job-0.agprof"),
                                     os.path.join(d, "job-1.agprof"))
    check_eq(rc, 0, "agprof merge --clock %s exit status (%s)" % (method, err.strip()))
    db = agtest.open_recording(job)
    r = db.execute("SELECT clock_method, clock_offset_ns, clock_matches FROM ranks WHERE rank = 1").fetchone() or (None, 0, 0)
    db.close()
    check_eq(r[0], method, "clock method with --clock %s" % method)
    return r

def check_merge(d, oracles, nkeyed):
    job = os.path.join(d, "job.agprof")
    nall = 0
    for i in range(2):
        s = agtest.open_recording(os.path.join(d, "job-%d.agprof" % i))
        nall += q1(s, "SELECT count(*) FROM collective_execs")
        s.close()
    rc, out, err = agtest.agprof_cmd("merge", "-o", job, os.path.join(d, "job-1.agprof"),
                                     os.path.join(d, "job-0.agprof"))
    check_eq(rc, 0, "agprof merge exit status (%s)" % err.strip())
    db = agtest.open_recording(job)
    agtest.check_recording_header(db)
    ranks = db.execute("SELECT rank, task_index, clock_method, clock_offset_ns, clock_residual_ns FROM ranks"
                       " ORDER BY rank").fetchall()
    check_eq([(r[0], r[1]) for r in ranks], [(0, 0), (1, 1)], "ranks are the TF_CONFIG task indices")
    check_eq([r[2] for r in ranks], ["same-host", "reference"], "clock methods (task 1 was given first)")
    check_eq(q1(db, "SELECT clock_matches FROM ranks WHERE rank = 0"), nkeyed,
             "same host: residual measured on the collectives matched by keys")
    check_eq(q1(db, "SELECT count(*) FROM collective_execs"), nall, "collectives: the sum of the inputs'")
    check(ranks[0][4] is not None and ranks[0][4] < 200000000, "residual of one host's barrier", ranks[0][4])
    check_eq(q1(db, "SELECT count(*) FROM processes WHERE rank IS NULL"), 0, "processes without a rank")
    check_eq(q1(db, "SELECT count(*) - count(DISTINCT text) FROM strings"), 0, "strings interned once")
    for i, o in enumerate(oracles):
        f = o["functions"]["train_step"]
        check_eq(q1(db, by_rank(TRACES, i)), f["tracing_count"], "merged traces of train_step, rank %d" % i)
        check_eq(q1(db, by_rank(CALLS, i)), f["calls"], "merged calls of train_step, rank %d" % i)
    src = {}
    for i in range(2):
        s = agtest.open_recording(os.path.join(d, "job-%d.agprof" % i))
        src[i] = q1(s, "SELECT count(*) FROM eager_ops")
        s.close()
    check_eq(q1(db, "SELECT count(*) FROM eager_ops"), src[0] + src[1], "eager ops: the sum of the inputs'")
    db.close()
    # one host: the true offset is 0, the estimate from the steps must find about that
    r = merge_with_clock(d, "steps")
    check(abs(r[1]) < 50000000, "estimated offset of one host's clock (true: 0) within 50 ms", r[1], 0)
    check_eq(r[2], oracles[0]["functions"]["train_step"]["calls"], "steps matched")
    r = merge_with_clock(d, "collectives")
    check(abs(r[1]) < 50000000, "offset from the keyed collectives (true: 0) within 50 ms", r[1], 0)
    check_eq(r[2], nkeyed, "collectives matched by keys")
    return job


def check_report(job, oracles):
    """The per-rank table (counts against each worker's own) and the planted problems found by the rules."""
    rc, out, err = agtest.agprof_cmd("report", "--format", "json", job)
    check_eq(rc, 0, "agprof report --format json on the merge (%s)" % err.strip()[-300:])
    rep = json.loads(out)
    ranks = {r["rank"]: r for r in rep["ranks"]}
    check_eq(sorted(ranks), [0, 1], "ranks in the JSON report")
    for i, o in enumerate(oracles):
        f = o["functions"]["train_step"]
        r = ranks.get(i, {})
        check_eq(r.get("traces"), f["tracing_count"], "report: traces of rank %d" % i)
        check_eq(r.get("steps"), f["calls"], "report: steps of rank %d" % i)
        check_eq(r.get("task_type"), "worker", "report: task of rank %d" % i)
    found = {}
    for f in rep["findings"]:
        found.setdefault(f["rule"], []).append(f)
    strag = found.get("straggler", [])
    check_eq(len(strag), 1, "straggler findings (rank 1 sleeps before every other step)")
    if strag:
        check(strag[0]["message"].startswith("rank 1 arrives last"), "the straggler is rank 1", strag[0]["message"])
        check("Python outside TensorFlow" in strag[0]["message"], "what rank 1 did instead: not TensorFlow (it slept)",
              strag[0]["message"])
    rr = found.get("rank-retrace", [])
    check_eq(len(rr), 1, "rank-retrace findings (task 0 retraces train_step once)")
    if rr:
        check("on rank(s) 0 " in rr[0]["message"] and "python-value" in rr[0]["message"],
              "rank-retrace names rank 0 and the cause", rr[0]["message"])
    cw = found.get("collective-wait", [])
    check_eq([f["message"].split()[1] for f in cw], ["0"], "collective-wait: rank 0 waits for rank 1")
    planted = (oracles[0]["extra"]["steps"] // 2) * SLEEP_MS * 1000000
    if cw:  # measured in rank 0's graph all-reduces: about the sleeps of rank 1
        check(0.6 * planted < cw[0]["cost_ns"] < 1.6 * planted, "collective-wait: rank 0's wait ~ the planted sleeps",
              cw[0]["cost_ns"], planted)
        check_duckdb_waits(job, cw[0]["cost_ns"])
    rc, out, err = agtest.agprof_cmd("report", "--ranks", job)
    check_eq(rc, 0, "agprof report --ranks")
    check("Ranks:" in out and "worker:1" in out, "the text report's per-rank table", out[-500:])
    # an unmerged recording: no ranks, none of the job rules
    rc, out, err = agtest.agprof_cmd("report", "--format", "json", job.replace("job.agprof", "job-0.agprof"))
    rep = json.loads(out) if rc == 0 else {"ranks": None, "findings": []}
    check_eq(rep["ranks"], [], "ranks of a single worker's recording")
    check_eq([f["rule"] for f in rep["findings"] if f["rule"] in ("straggler", "rank-retrace", "collective-wait")],
             [], "job rules on a single worker's recording")


def check_pre5_merge(d, job):
    """A merge made before schema 5 (no collective_execs): read, the job rules still found (eager collectives
    from eager_ops, matched by kind and occurrence; waits at the step barriers)."""
    old = os.path.join(d, "pre5.agprof")
    shutil.copy(job, old)
    db = sqlite3.connect(old)
    db.execute("DROP TABLE collective_execs")
    db.execute("PRAGMA user_version = 4")
    db.commit()
    db.close()
    rc, out, err = agtest.agprof_cmd("report", "--format", "json", old)
    check_eq(rc, 0, "agprof report on a schema 4 merge (%s)" % err.strip()[-300:])
    rules = sorted(f["rule"] for f in json.loads(out)["findings"]) if rc == 0 else []
    for rule in ("collective-wait", "straggler"):
        check(rule in rules, "schema 4 merge: %s still found" % rule, rules)


def check_duckdb_waits(job, agprof_wait_ns):
    """analyzer/model/sql/collective_wait.sql, unchanged, in DuckDB over the CSV export: the wait agprof reported."""
    try:
        import duckdb
    except ImportError:
        print("skip the DuckDB check: no duckdb module in %s" % sys.executable)
        return
    out = job + ".csv"
    rc, _, err = agtest.agprof_cmd("export", "--format", "csv", "-o", out, job)
    check_eq(rc, 0, "agprof export --format csv of the merge (%s)" % err.strip()[-200:])
    con = duckdb.connect()
    with open(os.path.join(out, "load.sql")) as fh:
        con.execute(fh.read())
    sql = {}
    for name in ("steps", "collectives", "collective_wait"):
        with open(os.path.join(agtest.SOURCE_ROOT, "analyzer", "model", "sql", name + ".sql")) as fh:
            sql[name] = fh.read()
    con.execute("CREATE VIEW steps AS " + sql["steps"])
    con.execute("CREATE VIEW collectives AS " + sql["collectives"])
    keyed = con.execute("SELECT count(*) FROM collectives WHERE match_key LIKE 'k:%'").fetchone()[0]
    check(keyed > 0, "DuckDB: the collectives view matches by keys", keyed)
    got = dict(con.execute("SELECT rank, wait_ns FROM (%s)" % sql["collective_wait"]).fetchall())
    check_eq(got.get(0), agprof_wait_ns, "DuckDB collective_wait.sql: rank 0's wait = agprof's")


def check_view(job):
    """agprof view: one process group per rank, in rank order (tmux, 120x30)."""
    if not shutil.which("tmux"):
        print("skip view check: no tmux")
        return
    sock = ["tmux", "-L", "agprof-mw-%d" % os.getpid()]
    subprocess.run(sock + ["new-session", "-d", "-x", "120", "-y", "30", "%s view %s" % (AGPROF, job)], check=True)
    try:
        screen = ""
        for _ in range(150):  # up to 30 s for the tracks (a loaded machine reads slowly)
            time.sleep(0.2)
            screen = subprocess.run(sock + ["capture-pane", "-p"], capture_output=True, text=True).stdout
            if "rank 1:" in screen and "reading" not in screen.split("\n")[0]:
                break
        r0, r1 = screen.find("rank 0: python"), screen.find("rank 1: python")
        check(0 <= r0 < r1, "agprof view: a process group per rank, rank 0 first", screen[:800])
        check_view_peer(sock, job)
    finally:
        subprocess.run(sock + ["kill-server"], capture_output=True)


def screen_after(sock, keys, want, tries=25):
    screen = ""
    for k in keys:
        subprocess.run(sock + ["send-keys", k], check=True)
        time.sleep(0.1)
    for _ in range(tries):
        time.sleep(0.2)
        screen = subprocess.run(sock + ["capture-pane", "-p"], capture_output=True, text=True).stdout
        if want in screen:
            break
    return screen


def check_view_peer(sock, job):
    """A graph all-reduce selected through search: the details say its keys; c jumps to the same one on the other rank."""
    for _ in range(100):  # the kernel lanes are searchable once the background scan has published them
        title = subprocess.run(sock + ["capture-pane", "-p"], capture_output=True, text=True).stdout.split("\n")[0]
        if "reading" not in title:
            break
        time.sleep(0.2)
    screen = screen_after(sock, ["/", "CollectiveReduceV2", "Enter"], "matches")
    rows = [ln for ln in screen.splitlines() if "cpu kernel" in ln]
    pick = next((i for i, ln in enumerate(rows) if ln.rstrip().endswith("  CollectiveReduceV2")), None)
    check(pick is not None, "agprof view: search lists the CollectiveReduceV2 kernels", screen)
    if pick is None:
        return
    screen = screen_after(sock, ["Down"] * pick + ["Enter"], "collective:")
    line = next((ln for ln in screen.splitlines() if ln.startswith("collective:")), "")
    words = line.replace(",", " ").split()
    check("group" in words and "instance" in words and "2 ranks" in line,
          "agprof view: the details give the collective's keys and its ranks", screen)
    if "group" not in words or "instance" not in words:
        return
    g, inst = int(words[words.index("group") + 1]), int(words[words.index("instance") + 1])
    pid_here = next((ln.split("pid ")[1].split()[0] for ln in screen.splitlines() if "pid " in ln), None)
    screen = screen_after(sock, ["c"], "the same collective")
    msg = next((ln for ln in screen.splitlines() if "the same collective" in ln), "")
    check(("group %d instance %d " % (g, inst)) in msg, "agprof view c: the same keys on the other rank", msg, (g, inst))
    db = agtest.open_recording(job)
    ranks = dict(db.execute("SELECT pid, rank FROM processes").fetchall())
    on_both = q1(db, "SELECT count(DISTINCT p.rank) FROM collective_execs c JOIN processes p ON p.pid = c.pid"
                     " WHERE c.group_key = %d AND c.instance_key = %d" % (g, inst))
    db.close()
    check_eq(on_both, 2, "the collective the view matched is on both ranks in the recording")
    pid_there = next((ln.split("pid ")[1].split()[0] for ln in screen.splitlines() if "pid " in ln), None)
    here = ranks.get(int(pid_here)) if pid_here and pid_here.isdigit() else None
    check(here is not None and msg.startswith("rank %d:" % (1 - here)) and pid_there != pid_here,
          "agprof view c: selects the collective on the other rank", msg, (pid_here, pid_there))


SHIFT_NS = 5000000000  # a second host's clock, planted: 5 s ahead


def check_other_host(d):
    """Worker 1 as if recorded on another host whose clock runs 5 s ahead: the
    merge must find the offset from the step ends and undo it."""
    moved = os.path.join(d, "moved-1.agprof")
    shutil.copy(os.path.join(d, "job-1.agprof"), moved)
    db = sqlite3.connect(moved)
    db.execute("UPDATE meta SET value = 'elsewhere' WHERE key = 'host'")
    for t in ("function_calls", "traces", "processes", "collective_execs"):
        db.execute("UPDATE %s SET start_ns = start_ns + ?, end_ns = end_ns + ?" % t, (SHIFT_NS, SHIFT_NS))
    # schema 6: the eager ops' times are after their keys' base_ns; their blocks bound them
    db.execute("UPDATE eager_op_keys SET base_ns = base_ns + ?", (SHIFT_NS,))
    db.execute("UPDATE eager_op_blocks SET min_start_ns = min_start_ns + ?, max_start_ns = max_start_ns + ?",
               (SHIFT_NS, SHIFT_NS))
    db.commit()
    db.close()
    job = os.path.join(d, "job-moved.agprof")
    rc, out, err = agtest.agprof_cmd("merge", "-o", job, os.path.join(d, "job-0.agprof"), moved)
    check_eq(rc, 0, "merge with a worker of another host (%s)" % err.strip())
    db = agtest.open_recording(job)
    r = db.execute("SELECT clock_method, clock_offset_ns, clock_residual_ns FROM ranks WHERE rank = 1").fetchone()
    check_eq(r[0], "collectives", "clock method for another host: its collectives, matched by keys")
    check(abs(r[1] + SHIFT_NS) < 50000000, "estimated offset within 50 ms of the planted -5 s", r[1], -SHIFT_NS)
    check(r[2] is not None and r[2] < 200000000, "residual reported", r[2])
    orig = agtest.open_recording(os.path.join(d, "job-1.agprof"))
    first = q1(orig, "SELECT min(start_ns) FROM function_calls")
    orig.close()
    got = q1(db, "SELECT min(c.start_ns) FROM function_calls c JOIN processes p ON p.pid = c.pid WHERE p.rank = 1")
    check(abs(got - first) < 50000000, "rank 1's times back on rank 0's clock", got - first, 0)
    db.close()


def check_pid_collision(d):
    """The same worker twice (a copy): same task index, same pids: ranks by input order, pids moved."""
    w0 = os.path.join(d, "job-0.agprof")
    copy = os.path.join(d, "copy-0.agprof")
    shutil.copy(w0, copy)
    job = os.path.join(d, "twice.agprof")
    rc, out, err = agtest.agprof_cmd("merge", "-o", job, w0, copy)
    check_eq(rc, 0, "merge of a recording with its copy (%s)" % err.strip())
    db = agtest.open_recording(job)
    src = agtest.open_recording(w0)
    n = q1(src, "SELECT count(*) FROM processes")
    calls = q1(src, "SELECT count(*) FROM function_calls")
    src.close()
    check_eq(q1(db, "SELECT count(DISTINCT pid) FROM processes"), 2 * n, "pids moved: none shared by the two ranks")
    check(q1(db, "SELECT pid_shift FROM ranks WHERE rank = 1") > 0, "rank 1's pid shift")
    check_eq(q1(db, "SELECT count(*) FROM function_calls c JOIN processes p ON p.pid = c.pid WHERE p.rank = 1"),
             calls, "rank 1's calls follow its moved pids")
    db.close()


def check_versions(d):
    old = os.path.join(d, "old.agprof")
    shutil.copy(os.path.join(d, "job-0.agprof"), old)
    db = sqlite3.connect(old)
    db.execute("PRAGMA user_version = 3")
    db.close()
    rc, out, err = agtest.agprof_cmd("merge", "-o", os.path.join(d, "mixed.agprof"), os.path.join(d, "job-1.agprof"),
                                     old)
    check_eq(rc, 2, "merge of two schema versions: exit status")
    check("different schema versions" in err and err.count("\n") == 1, "one-line error", err)
    check(not os.path.exists(os.path.join(d, "mixed.agprof")), "no output left by a refused merge")
    w0 = os.path.join(d, "job-0.agprof")
    size = os.path.getsize(w0)
    rc, out, err = agtest.agprof_cmd("merge", "--force", "-o", w0, w0, os.path.join(d, "job-1.agprof"))
    check_eq(rc, 2, "merge --force onto one of its inputs: exit status")
    check_eq(os.path.getsize(w0), size, "the input is left as it was")
    rc, out, err = agtest.agprof_cmd("merge", "-o", os.path.join(d, "none.agprof"), os.path.join(d, "missing.agprof"))
    check_eq(rc, 2, "merge of a missing file: exit status")
    # a full disk, as a file size limit smaller than the merge: exit 3, one line, no output
    import resource
    full = os.path.join(d, "full.agprof")
    limit = 2 * os.path.getsize(w0)  # past the schema, short of the copy (its write-ahead log)
    p = subprocess.run([AGPROF, "merge", "-o", full, w0, os.path.join(d, "job-1.agprof")], capture_output=True,
                       text=True, timeout=120,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))
    check_eq(p.returncode, 3, "merge past a file size limit: exit status (%s)" % p.stderr.strip()[-300:])
    check_eq(len(p.stderr.splitlines()), 1, "merge past a file size limit: one error line")
    check(not os.path.exists(full), "no output left by a failed merge")


def main():
    agtest.need_agprof()
    d = agtest.tmpdir()
    oracles = run_job(d, {"MW_STRAGGLER": "1", "MW_RETRACE": "0", "MW_SLEEP_MS": str(SLEEP_MS)})
    check_workers(d, oracles)
    nkeyed = check_collectives(d, oracles)
    job = check_merge(d, oracles, nkeyed)
    check_report(job, oracles)
    check_pre5_merge(d, job)
    check_view(job)
    check_other_host(d)
    check_pid_collision(d)
    check_versions(d)
    agtest.finish("multiworker")


if __name__ == "__main__":
    main()
