-- summary: one row per recording of an `agprof export --fleet` folder: its
-- host, day and status (recordings), traces and retraces (traces after a
-- function's first), the time tracing (per thread, a trace nested in
-- another of its thread counted once, as agprof's session.trace_ns), graph
-- function calls and eager ops (rows and past-budget buckets), eager time.
-- Eager reads of a tf.data iterator (IteratorGetNext...) are input waits,
-- not eager ops, as in agprof's report; an op's time is its dispatch and
-- the Python before it (end_ns - start_ns + python_ns, docs/schema.md).  Runs unchanged in Spark SQL and
-- DuckDB over the views of the folder's _load/ (docs/fleet.md).
WITH nested AS (
    SELECT DISTINCT t.recording AS recording, t.id AS id
    FROM traces t JOIN traces o
      ON o.recording = t.recording AND o.pid = t.pid AND o.tid = t.tid AND o.id <> t.id
     AND o.start_ns <= t.start_ns AND o.end_ns >= t.end_ns
     AND (o.start_ns < t.start_ns OR o.end_ns > t.end_ns OR o.id < t.id)
), traced AS (
    SELECT t.recording AS recording, count(*) AS traces, count(DISTINCT t.function_id) AS functions,
           sum(CASE WHEN n.id IS NULL THEN t.end_ns - t.start_ns ELSE 0 END) AS trace_ns
    FROM traces t LEFT JOIN nested n ON n.recording = t.recording AND n.id = t.id
    GROUP BY t.recording
), calls AS (
    SELECT recording, sum(n) AS function_calls FROM (
        SELECT recording, 1 AS n FROM function_calls
        UNION ALL
        SELECT recording, count AS n FROM function_call_buckets
    ) c GROUP BY recording
), eager AS (
    SELECT recording, sum(n) AS eager_ops, sum(ns) AS eager_ns FROM (
        SELECT e.recording AS recording, 1 AS n, e.end_ns - e.start_ns + e.python_ns AS ns, s.text AS op
        FROM eager_ops e JOIN strings s ON s.recording = e.recording AND s.id = e.op_id
        UNION ALL
        SELECT b.recording, b.count, b.total_ns + b.python_ns, s.text
        FROM eager_op_buckets b JOIN strings s ON s.recording = b.recording AND s.id = b.op_id
    ) x WHERE op NOT LIKE 'IteratorGetNext%' AND op NOT LIKE 'MultiDeviceIteratorGetNext%'
    GROUP BY recording
)
SELECT r.recording AS recording, r.host AS host, r.start_day AS start_day, r.status AS status,
       coalesce(tr.traces, 0) AS traces,
       coalesce(tr.traces, 0) - coalesce(tr.functions, 0) AS retraces,
       coalesce(tr.trace_ns, 0) AS trace_ns,
       coalesce(c.function_calls, 0) AS function_calls,
       coalesce(e.eager_ops, 0) AS eager_ops,
       coalesce(e.eager_ns, 0) AS eager_ns
FROM recordings r
LEFT JOIN traced tr ON tr.recording = r.recording
LEFT JOIN calls c ON c.recording = r.recording
LEFT JOIN eager e ON e.recording = r.recording
ORDER BY r.recording
