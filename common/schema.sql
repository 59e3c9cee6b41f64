-- agprof recording schema, version 9.  docs/schema.md explains every table.
-- Times are nanoseconds on CLOCK_MONOTONIC of the recording host.
PRAGMA user_version = 9;
PRAGMA application_id = 1634168946;  -- 'agpr'

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT
);

CREATE TABLE strings (
    id   INTEGER PRIMARY KEY,
    text TEXT NOT NULL UNIQUE
);

CREATE TABLE processes (
    pid            INTEGER PRIMARY KEY,
    ppid           INTEGER,
    argv           TEXT,
    start_ns       INTEGER,
    end_ns         INTEGER,
    exit_status    INTEGER,
    python_version TEXT,
    tf_version     TEXT,
    tf_status      TEXT NOT NULL DEFAULT 'not-loaded',
    tf_detail      TEXT,
    gpu_status     TEXT NOT NULL DEFAULT 'off',
    gpu_detail     TEXT,
    dropped_events INTEGER NOT NULL DEFAULT 0,
    kernel_status  TEXT,              -- v4: hooked, unnamed, off, not-reached; NULL: TF not loaded
    kernel_detail  TEXT,
    dropped_kernels INTEGER NOT NULL DEFAULT 0, -- v4: kernels not recorded (buffers a quarter full)
    rank           INTEGER                       -- agprof merge: the rank (ranks.rank); NULL unmerged
);

CREATE TABLE threads (
    pid  INTEGER NOT NULL,
    tid  INTEGER NOT NULL,
    name TEXT,
    role TEXT NOT NULL DEFAULT 'other',
    PRIMARY KEY (pid, tid)
);

CREATE TABLE callsites (
    id       INTEGER PRIMARY KEY,
    file_id  INTEGER NOT NULL REFERENCES strings(id),
    line     INTEGER NOT NULL,
    func_id  INTEGER NOT NULL REFERENCES strings(id),
    parent_id INTEGER REFERENCES callsites(id),  -- next frame out toward user code
    library  INTEGER NOT NULL DEFAULT 0,          -- 1: a library frame
    UNIQUE (file_id, line, func_id, parent_id, library)
);

CREATE TABLE functions (
    id        INTEGER PRIMARY KEY,
    pid       INTEGER NOT NULL,
    name_id   INTEGER NOT NULL REFERENCES strings(id),
    file_id   INTEGER REFERENCES strings(id),
    line      INTEGER,
    UNIQUE (pid, name_id, file_id, line)
);

CREATE TABLE traces (
    id               INTEGER PRIMARY KEY,
    function_id      INTEGER NOT NULL REFERENCES functions(id),
    pid              INTEGER NOT NULL,
    tid              INTEGER NOT NULL,
    start_ns         INTEGER NOT NULL,
    end_ns           INTEGER NOT NULL,
    function_object  INTEGER NOT NULL,
    object_trace_no  INTEGER NOT NULL,
    tf_name_id       INTEGER REFERENCES strings(id),
    signature        TEXT,
    callsite_id      INTEGER REFERENCES callsites(id),
    jit_compile      INTEGER NOT NULL DEFAULT 0,
    reduce_retracing INTEGER NOT NULL DEFAULT 0,
    has_input_signature INTEGER NOT NULL DEFAULT 0,
    variables_created INTEGER NOT NULL DEFAULT 0,
    status           TEXT NOT NULL DEFAULT 'ok',
    collector_ns     INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE trace_inputs (
    trace_id  INTEGER NOT NULL REFERENCES traces(id),
    position  INTEGER NOT NULL,
    name      TEXT,
    kind      TEXT NOT NULL,
    dtype     TEXT,
    shape     TEXT,
    value     TEXT,
    PRIMARY KEY (trace_id, position)
);

CREATE TABLE graph_functions (
    id            INTEGER PRIMARY KEY,
    pid           INTEGER NOT NULL,
    name_id       INTEGER NOT NULL REFERENCES strings(id),
    role          TEXT NOT NULL,
    trace_id      INTEGER REFERENCES traces(id),
    function_id   INTEGER REFERENCES functions(id),
    parent_id     INTEGER REFERENCES graph_functions(id),
    created_ns    INTEGER NOT NULL,
    jit_compile   INTEGER NOT NULL DEFAULT 0,
    node_count    INTEGER NOT NULL DEFAULT 0,
    function_def  BLOB,
    UNIQUE (pid, name_id)
);

CREATE TABLE graph_inputs (
    graph_function_id INTEGER NOT NULL REFERENCES graph_functions(id),
    position  INTEGER NOT NULL,
    name      TEXT,
    dtype     TEXT,
    shape     TEXT,
    PRIMARY KEY (graph_function_id, position)
);

CREATE TABLE graph_constants (
    graph_function_id INTEGER NOT NULL REFERENCES graph_functions(id),
    node_name TEXT NOT NULL,
    dtype     TEXT,
    value     TEXT
);

CREATE TABLE blackbox_nodes (
    id                INTEGER PRIMARY KEY,
    graph_function_id INTEGER NOT NULL REFERENCES graph_functions(id),
    node_name         TEXT NOT NULL,
    op_type           TEXT NOT NULL,
    token             TEXT
);

CREATE TABLE function_calls (
    id                INTEGER PRIMARY KEY,
    pid               INTEGER NOT NULL,
    tid               INTEGER NOT NULL,
    start_ns          INTEGER NOT NULL,
    end_ns            INTEGER NOT NULL,
    graph_function_id INTEGER REFERENCES graph_functions(id),
    name_id           INTEGER NOT NULL REFERENCES strings(id),
    callsite_id       INTEGER REFERENCES callsites(id),
    ok                INTEGER NOT NULL DEFAULT 1,
    kernel_detail     INTEGER NOT NULL DEFAULT 0, -- v5: 1 = every kernel of the call is in kernels (a sampled call)
    seq               INTEGER  -- v9: the collector's call seq (low 32 bits): kernels.call_id is -seq until linked
);

-- v6: eager ops kept as rows, compact (issue 11: <= 32 bytes per op, no
-- index on them).  What repeats from op to op (thread, op, device, call
-- site) is one eager_op_keys row; a row holds its key, its start after the
-- key's base_ns, its duration, python_ns and flags (SQLite stores 0 and 1 in
-- no byte: bit 0 slow path, bit 1 failed).  Rows are appended in the order
-- the writer drains them, so ids follow time on each thread; time-range
-- reads seek by id ranges, never by an index on start.  The view eager_ops
-- below gives the columns of schemas 1-5 (readers of older recordings read
-- their table of that name).
CREATE TABLE eager_op_keys (
    id          INTEGER PRIMARY KEY,
    pid         INTEGER NOT NULL,
    tid         INTEGER NOT NULL,
    op_id       INTEGER NOT NULL REFERENCES strings(id),
    device_id   INTEGER REFERENCES strings(id),
    callsite_id INTEGER REFERENCES callsites(id),
    base_ns     INTEGER NOT NULL       -- eager_op_rows.start is after it
);

CREATE TABLE eager_op_rows (
    id          INTEGER PRIMARY KEY,
    key         INTEGER NOT NULL,      -- eager_op_keys.id
    start       INTEGER NOT NULL,      -- ns after the key's base_ns
    dur         INTEGER NOT NULL,      -- end_ns - start_ns
    python_ns   INTEGER NOT NULL DEFAULT 0,
    flags       INTEGER NOT NULL DEFAULT 0  -- 1: slow path, 2: failed
);

-- Where one thread's eager ops are (eager_op_rows has no index): each of
-- its ops with an id in [first_id, last_id] has its start_ns in
-- [min_start_ns, max_start_ns], and every row is in a block of its thread.
-- The writer closes the open blocks every 1,024 rows and before each commit
-- (all threads' blocks of one close share the id range).
CREATE TABLE eager_op_blocks (
    id           INTEGER PRIMARY KEY,
    pid          INTEGER NOT NULL,
    tid          INTEGER NOT NULL,
    first_id     INTEGER NOT NULL,     -- eager_op_rows.id
    last_id      INTEGER NOT NULL,
    min_start_ns INTEGER NOT NULL,     -- absolute, as eager_ops.start_ns
    max_start_ns INTEGER NOT NULL
);

-- The columns of schemas 1-5.  agprof's readers define the same view as a
-- TEMP view on their own connection (db_open_readonly(): views in a file
-- are off there), from this statement's text: keep it one statement.
CREATE VIEW eager_ops AS SELECT r.id AS id, k.pid AS pid, k.tid AS tid, k.base_ns + r.start AS start_ns,
    k.base_ns + r.start + r.dur AS end_ns, k.op_id AS op_id, k.device_id AS device_id,
    k.callsite_id AS callsite_id, r.flags & 1 AS slow_path, (r.flags & 2) = 0 AS ok, r.python_ns AS python_ns
    FROM eager_op_rows r JOIN eager_op_keys k ON k.id = r.key;

-- Rows written through the view (tests, tools, merge of schema 1-5 inputs):
-- one key per (thread, op, device, call site) at base_ns 0.
CREATE TRIGGER eager_ops_insert INSTEAD OF INSERT ON eager_ops BEGIN
    INSERT INTO eager_op_keys(pid, tid, op_id, device_id, callsite_id, base_ns)
        SELECT NEW.pid, NEW.tid, NEW.op_id, NEW.device_id, NEW.callsite_id, 0
        WHERE NOT EXISTS (SELECT 1 FROM eager_op_keys WHERE pid = NEW.pid AND tid = NEW.tid AND op_id = NEW.op_id
                          AND device_id IS NEW.device_id AND callsite_id IS NEW.callsite_id AND base_ns = 0);
    INSERT INTO eager_op_rows(id, key, start, dur, python_ns, flags)
        VALUES (NEW.id, (SELECT id FROM eager_op_keys WHERE pid = NEW.pid AND tid = NEW.tid AND op_id = NEW.op_id
                         AND device_id IS NEW.device_id AND callsite_id IS NEW.callsite_id AND base_ns = 0),
                NEW.start_ns, NEW.end_ns - NEW.start_ns, coalesce(NEW.python_ns, 0),
                (coalesce(NEW.slow_path, 0) <> 0) | ((coalesce(NEW.ok, 1) = 0) << 1));
    -- the thread's last block takes the row while it holds fewer than 1,024 ids; else a new one
    UPDATE eager_op_blocks SET last_id = last_insert_rowid(), min_start_ns = min(min_start_ns, NEW.start_ns),
            max_start_ns = max(max_start_ns, NEW.start_ns)
        WHERE id = (SELECT max(id) FROM eager_op_blocks WHERE pid = NEW.pid AND tid = NEW.tid)
          AND last_id - first_id < 1023 AND last_id < last_insert_rowid();
    INSERT INTO eager_op_blocks(pid, tid, first_id, last_id, min_start_ns, max_start_ns)
        SELECT NEW.pid, NEW.tid, last_insert_rowid(), last_insert_rowid(), NEW.start_ns, NEW.start_ns
        WHERE NOT EXISTS (SELECT 1 FROM eager_op_blocks WHERE pid = NEW.pid AND tid = NEW.tid
                          AND last_insert_rowid() BETWEEN first_id AND last_id);
END;

CREATE TABLE blackbox_execs (
    id          INTEGER PRIMARY KEY,
    pid         INTEGER NOT NULL,
    tid         INTEGER NOT NULL,
    start_ns    INTEGER NOT NULL,
    end_ns      INTEGER NOT NULL,
    node_id     INTEGER NOT NULL REFERENCES strings(id),
    op_type_id  INTEGER NOT NULL REFERENCES strings(id),
    token       TEXT,
    blackbox_node_id INTEGER REFERENCES blackbox_nodes(id)
);

CREATE TABLE gpu_activity (
    id             INTEGER PRIMARY KEY,
    pid            INTEGER NOT NULL,
    kind           TEXT NOT NULL,
    name_id        INTEGER REFERENCES strings(id),
    device         INTEGER,
    context        INTEGER,
    stream         INTEGER,
    start_ns       INTEGER NOT NULL,
    end_ns         INTEGER NOT NULL,
    correlation_id INTEGER,
    grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,
    block_x INTEGER, block_y INTEGER, block_z INTEGER,
    bytes          INTEGER,
    copy_kind      TEXT
);

CREATE TABLE gpu_api_calls (
    id             INTEGER PRIMARY KEY,
    pid            INTEGER NOT NULL,
    tid            INTEGER NOT NULL,
    api            TEXT NOT NULL,
    name_id        INTEGER REFERENCES strings(id),
    start_ns       INTEGER NOT NULL,
    end_ns         INTEGER NOT NULL,
    correlation_id INTEGER NOT NULL,
    external_id    INTEGER
);

CREATE TABLE gpu_external_ids (
    pid          INTEGER NOT NULL,
    external_id  INTEGER NOT NULL,
    event_table  TEXT NOT NULL,
    event_id     INTEGER NOT NULL,
    PRIMARY KEY (pid, external_id)
);

CREATE TABLE session_runs (
    id          INTEGER PRIMARY KEY,
    pid         INTEGER NOT NULL,
    tid         INTEGER NOT NULL,
    start_ns    INTEGER NOT NULL,
    end_ns      INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    callsite_id INTEGER REFERENCES callsites(id),
    feeds       INTEGER NOT NULL DEFAULT 0,
    fetches     INTEGER NOT NULL DEFAULT 0,
    targets     INTEGER NOT NULL DEFAULT 0,
    ok          INTEGER NOT NULL DEFAULT 1
);

-- What a trace did that it should not (collector/pywatch.c): Python side
-- effects, AutoGraph fallbacks, the exception of a failed trace, the user
-- lines that created most nodes of its graph.  One row per (trace, kind,
-- name, file, line); trace_seq numbers the traces of one process (the trace
-- row's link is trace_id, NULL when the trace itself was not recorded).
CREATE TABLE trace_events (
    id            INTEGER PRIMARY KEY,
    pid           INTEGER NOT NULL,
    trace_seq     INTEGER NOT NULL,
    trace_id      INTEGER REFERENCES traces(id),
    kind          TEXT NOT NULL,
    name          TEXT,
    file          TEXT,
    line          INTEGER,
    count         INTEGER NOT NULL DEFAULT 1,
    detail        TEXT,
    repeats       INTEGER NOT NULL DEFAULT 0,  -- node-line: times its body ran
    loop_line     INTEGER NOT NULL DEFAULT 0,  -- node-line: the enclosing loop's line
    function      TEXT,
    function_file TEXT,
    function_line INTEGER
);

-- v4: the nodes kernels ran for.  A graph function's nodes come from its
-- FunctionDef (file/line: the user line that created the node, read from
-- the traced graph's op tracebacks); a kernel no FunctionDef names (an eager
-- op, a Session.run node, a node grappler made) gets a node of its own with
-- graph_function_id NULL, one per (pid, name, op_type).
CREATE TABLE graph_nodes (
    id                INTEGER PRIMARY KEY,
    pid               INTEGER NOT NULL,
    graph_function_id INTEGER REFERENCES graph_functions(id),
    name              TEXT NOT NULL,
    op_type           TEXT NOT NULL,
    file              TEXT,
    line              INTEGER
);

-- v4: every CPU kernel execution (ThreadPoolDevice::Compute/ComputeAsync).
-- Integers only: the highest-rate table.  async = 1: ComputeAsync, whose
-- span is the dispatch only.
CREATE TABLE kernels (
    id       INTEGER PRIMARY KEY,
    pid      INTEGER NOT NULL,
    tid      INTEGER NOT NULL,
    start_ns INTEGER NOT NULL,
    end_ns   INTEGER NOT NULL,
    node_id  INTEGER REFERENCES graph_nodes(id),
    call_id  INTEGER REFERENCES function_calls(id),  -- NULL: eager, Session.run, unknown
    async    INTEGER NOT NULL DEFAULT 0
);

-- v5: every CPU kernel execution, counted: per thread and node, how many
-- ran, sampled calls included, and how many of them were timed (the sampled
-- calls', which kernels holds one by one: function_calls.kernel_detail) with
-- their summed time: count * timed_ns / timed estimates the kernel's time.
-- A (pid, tid, node_id) may have several rows: sum them.  call_id: one call
-- the kernel ran under (what ties it to graph_function_id), NULL: none
-- (eager, Session.run, tf.data) or unknown.
CREATE TABLE kernel_totals (
    pid               INTEGER NOT NULL,
    tid               INTEGER NOT NULL,
    node_id           INTEGER REFERENCES graph_nodes(id),
    call_id           INTEGER REFERENCES function_calls(id),
    graph_function_id INTEGER REFERENCES graph_functions(id),
    count             INTEGER NOT NULL,
    timed             INTEGER NOT NULL DEFAULT 0,
    timed_ns          INTEGER NOT NULL DEFAULT 0
);

-- The user's source files named by callsites/functions, as they were when the
-- run ended: lets `agprof report`/`agprof fix` say when a file changed since.
CREATE TABLE source_files (
    path     TEXT PRIMARY KEY,
    size     INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    hash     TEXT NOT NULL
);

-- What the user's source files say, read with CPython's own ast when the run
-- ended (writer/codefacts.py): functions, loops, calls and what each callee
-- is, attribute stores, a call's result used as NumPy.  Optional in 9
-- (written since stop 45): an older recording reads it empty.
CREATE TABLE code_facts (
    path     TEXT NOT NULL,     -- as source_files.path
    kind     TEXT NOT NULL,     -- facts, function, loop, block, call, store, global, numpy-use, error, call-span, arg, def, decorator, param, assign, bind, ref, yield, signature (docs/schema.md)
    line     INTEGER NOT NULL,
    col      INTEGER NOT NULL DEFAULT 0,
    end_line INTEGER NOT NULL,
    name     TEXT,
    detail   TEXT,
    PRIMARY KEY (path, kind, line, col)
);

-- Notebook cells (the IPython magic %%agprof writes them): each file name a
-- cell's code was compiled with, the cell's label ("In [3]"), the cell's line
-- of the code's line 1, and the cell's text as the user wrote it.
-- v9 (optional): how long the program's threads waited for a CPU, sampled
-- by the writer from /proc/PID/task/*/schedstat about every 50 ms; a row
-- covers (the process's previous t_ns, t_ns].  A loaded machine shows as
-- wait: agprof diff and check compare step times with it taken out.
CREATE TABLE cpu_samples (
    pid     INTEGER NOT NULL,
    t_ns    INTEGER NOT NULL,   -- CLOCK_MONOTONIC, as the events
    run_ns  INTEGER NOT NULL,   -- the threads' time on a CPU in the interval, summed
    wait_ns INTEGER NOT NULL,   -- their time runnable but waiting for one (run-queue delay)
    threads INTEGER NOT NULL    -- the threads read
);

-- v9 (optional): each thread that dispatched eager ops, on its own: its time
-- on a CPU and its run-queue wait over (from_ns, t_ns], read with the
-- cpu_samples above.  The eager share is read on the thread's time less
-- that wait, so that a loaded machine does not change it (docs/rules.md).
CREATE TABLE thread_samples (
    pid     INTEGER NOT NULL,
    tid     INTEGER NOT NULL,
    from_ns INTEGER NOT NULL,   -- the previous read of the thread (CLOCK_MONOTONIC, as the events)
    t_ns    INTEGER NOT NULL,   -- this read
    run_ns  INTEGER NOT NULL,   -- the thread's time on a CPU in the interval
    wait_ns INTEGER NOT NULL    -- its time runnable but waiting for one (run-queue delay)
);

-- optional in 9: what one op of a type costs the thread, timed at the process's first trace (docs/schema.md)
CREATE TABLE op_prices (
    pid     INTEGER NOT NULL,
    tid     INTEGER NOT NULL,
    op_id   INTEGER NOT NULL REFERENCES strings(id),  -- the op type (_EagerConst, Cast, ...)
    samples INTEGER NOT NULL,   -- ops timed, in batches
    cpu_ns  INTEGER NOT NULL,   -- the median batch's thread CPU time per op
    wall_ns INTEGER NOT NULL    -- the median batch's wall-clock time per op
);

CREATE TABLE notebook_cells (
    path       TEXT PRIMARY KEY,
    label      TEXT NOT NULL,
    first_line INTEGER NOT NULL DEFAULT 1,
    source     TEXT NOT NULL
);

-- agprof merge: one row per input recording (a worker of a multi-worker
-- job), with the clock offset added to its times and how it was found.
CREATE TABLE ranks (
    rank              INTEGER PRIMARY KEY,
    source            TEXT NOT NULL,     -- the input recording's path
    task_type         TEXT,              -- its meta.tf_task_type
    task_index        INTEGER,           -- its meta.tf_task_index
    host              TEXT,
    pid_shift         INTEGER NOT NULL DEFAULT 0,  -- added to its pids (they collided)
    clock_offset_ns   INTEGER NOT NULL DEFAULT 0,  -- added to its times
    clock_method      TEXT NOT NULL,     -- reference, same-host, steps, none
    clock_residual_ns INTEGER,           -- median misfit of the matched events; NULL unknown
    clock_matches     INTEGER NOT NULL DEFAULT 0   -- events matched with the reference rank
);

-- The capture windows (run --delay/--duration/--capture, SIGUSR2,
-- agprof.start/stop): per process, the times its high-rate events (eager
-- ops, graph calls, black-box runs, Session steps) were recorded.  Empty
-- when the whole run was recorded (meta.capture absent); meta.capture set
-- and no row: the window never opened.  Schema 4.
CREATE TABLE capture_windows (
    pid      INTEGER NOT NULL,
    start_ns INTEGER NOT NULL,
    end_ns   INTEGER NOT NULL,
    why      TEXT NOT NULL
);

-- v5: eager ops past the recording's budget (run --max-events, --max-size):
-- per (thread, op, device, call site) and second of start_ns, their exact
-- count and summed times instead of one row each (docs/schema.md: the
-- histogram's layout).  Readers add these to eager_ops' rows; meta
-- aggregate_from_ns says when the switch happened.
CREATE TABLE eager_op_buckets (
    id          INTEGER PRIMARY KEY,
    pid         INTEGER NOT NULL,
    tid         INTEGER NOT NULL,
    start_ns    INTEGER NOT NULL,      -- the bucket's first op's start
    end_ns      INTEGER NOT NULL,      -- its latest op's end
    op_id       INTEGER NOT NULL REFERENCES strings(id),
    device_id   INTEGER REFERENCES strings(id),
    callsite_id INTEGER REFERENCES callsites(id),
    count       INTEGER NOT NULL,
    total_ns    INTEGER NOT NULL,      -- sum of end_ns - start_ns
    python_ns   INTEGER NOT NULL DEFAULT 0,  -- sum of eager_ops.python_ns
    slow_path   INTEGER NOT NULL DEFAULT 0,  -- ops that took the slow path
    failed      INTEGER NOT NULL DEFAULT 0,  -- ops that failed (eager_ops.ok = 0)
    histogram   BLOB                   -- durations, log2 buckets (docs/schema.md)
);

-- v7: graph function calls and black-box runs past the recording's budget,
-- as eager ops' buckets are: per (thread, function, call site), resp.
-- (thread, node, op type, token), and second of start_ns, the exact count,
-- summed and log2-histogrammed durations.  Readers add these to
-- function_calls' and blackbox_execs' rows (docs/schema.md: which calls stay
-- rows, and why).  The columns are the row tables' (the analyzer's key
-- expressions read both); graph_function_id and blackbox_node_id are set at
-- the end of the run as for the rows.
CREATE TABLE function_call_buckets (
    id                INTEGER PRIMARY KEY,
    pid               INTEGER NOT NULL,
    tid               INTEGER NOT NULL,
    start_ns          INTEGER NOT NULL,      -- the bucket's first call's start
    end_ns            INTEGER NOT NULL,      -- its latest call's end
    graph_function_id INTEGER REFERENCES graph_functions(id),
    name_id           INTEGER NOT NULL REFERENCES strings(id),
    callsite_id       INTEGER REFERENCES callsites(id),
    count             INTEGER NOT NULL,
    total_ns          INTEGER NOT NULL,      -- sum of end_ns - start_ns
    failed            INTEGER NOT NULL DEFAULT 0,  -- calls that failed (function_calls.ok = 0)
    histogram         BLOB                   -- as eager_op_buckets.histogram
);

CREATE TABLE blackbox_buckets (
    id               INTEGER PRIMARY KEY,
    pid              INTEGER NOT NULL,
    tid              INTEGER NOT NULL,
    start_ns         INTEGER NOT NULL,
    end_ns           INTEGER NOT NULL,
    node_id          INTEGER NOT NULL REFERENCES strings(id),
    op_type_id       INTEGER NOT NULL REFERENCES strings(id),
    token            TEXT,
    blackbox_node_id INTEGER REFERENCES blackbox_nodes(id),
    count            INTEGER NOT NULL,
    total_ns         INTEGER NOT NULL,
    failed           INTEGER NOT NULL DEFAULT 0,
    histogram        BLOB
);

-- Schema 5: one row per collective op execution (all-reduce, all-gather,
-- broadcast, ...), eager or a kernel of a graph function, with the keys
-- that name the same collective on every worker (collector/
-- hooks_collective.c).  graph = 1: an asynchronous kernel whose span runs
-- from its dispatch to its done callback, i.e. it includes the wait for
-- the other workers; graph = 0: an eager op (TFE_Execute's span).
-- group_size/group_key/instance_key NULL: not read, key_status says why
-- (then collectives are matched by kind and occurrence, analyzer/sql/
-- collectives.sql).  An instance key names one collective *of a program*:
-- a tf.function's collectives repeat their keys at every call, so the n-th
-- execution of (group_key, instance_key) on one rank is the n-th on all.
CREATE TABLE collective_execs (
    id           INTEGER PRIMARY KEY,
    pid          INTEGER NOT NULL,
    tid          INTEGER NOT NULL,     -- the dispatching thread
    op_id        INTEGER NOT NULL REFERENCES strings(id),  -- CollectiveReduceV2, CollectiveBcastSend, ...
    start_ns     INTEGER NOT NULL,
    end_ns       INTEGER NOT NULL,
    graph        INTEGER NOT NULL,
    group_size   INTEGER,
    group_key    INTEGER,
    instance_key INTEGER,
    key_status   TEXT
);

-- v8: tf.data ops run eagerly with the addresses of their handles
-- (collector/hooks_tf.c): a dataset's output is the next one's input, an
-- iterator's is MakeIterator's second input, and a read names its
-- iterator.  Reads are recorded when a thread reads another iterator than
-- its previous read did (the reads themselves are eager_ops rows).
CREATE TABLE dataset_ops (
    id       INTEGER PRIMARY KEY,
    pid      INTEGER NOT NULL,
    tid      INTEGER NOT NULL,
    op_id    INTEGER NOT NULL REFERENCES strings(id),  -- FlatMapDataset, MakeIterator, IteratorGetNext, ...
    start_ns INTEGER NOT NULL,
    end_ns   INTEGER NOT NULL,
    input    INTEGER,           -- address of its first input handle, NULL: none
    input2   INTEGER,           -- of its second (MakeIterator: the iterator)
    output   INTEGER            -- of its first output (not for reads)
);

-- @indexes: created by the launcher right after the tables (schema 4; kept
-- up to date during the run, so that its finish builds none).  No index on
-- eager_ops(callsite_id) since schema 4: per-site counts are one hashed scan.
-- Schema 6: none on eager_op_rows (its ids are in time order per thread).
CREATE INDEX eager_op_keys_key ON eager_op_keys(pid, tid, op_id, device_id, callsite_id);
CREATE INDEX eager_op_blocks_thread ON eager_op_blocks(pid, tid, min_start_ns, max_start_ns, first_id, last_id);
CREATE INDEX eager_op_buckets_time ON eager_op_buckets(start_ns);
CREATE INDEX function_call_buckets_time ON function_call_buckets(start_ns);
CREATE INDEX blackbox_buckets_time ON blackbox_buckets(start_ns);
CREATE INDEX function_calls_time ON function_calls(start_ns);
CREATE INDEX function_calls_fn ON function_calls(graph_function_id);
CREATE INDEX traces_fn ON traces(function_id, start_ns);
CREATE INDEX traces_time ON traces(start_ns);
CREATE INDEX blackbox_execs_time ON blackbox_execs(start_ns);
CREATE INDEX gpu_activity_time ON gpu_activity(start_ns);
CREATE INDEX gpu_api_calls_corr ON gpu_api_calls(pid, correlation_id);
CREATE INDEX graph_functions_trace ON graph_functions(trace_id);
CREATE INDEX session_runs_time ON session_runs(start_ns);
CREATE INDEX graph_nodes_fn ON graph_nodes(graph_function_id, name);
CREATE INDEX collective_execs_time ON collective_execs(start_ns);
-- @late-indexes: created when the run ends, after the launcher links each
-- kernel to its call (call_id is rewritten for every kernel then: keeping an
-- index on it during the run would update it twice per kernel).
CREATE INDEX kernels_call ON kernels(call_id, start_ns);
-- agprof view: one thread's kernels in a time window (its kernel lane).
CREATE INDEX kernels_thread ON kernels(pid, tid, start_ns);
