-- ranks: one row per rank of a merged recording: its task, its steps (the
-- step function's calls, steps.sql) and their mean time, its traces and
-- retraces, its eager dispatch and its input waits (eager reads of a
-- tf.data iterator), and shares of its active time (first to last
-- TensorFlow event of the rank).  Uses the views steps and collectives.
-- Reads function_call_buckets (schema 7; every merge agprof writes has it,
-- empty or not; agprof stands in an empty one for older merges).
WITH events AS (
    SELECT p.rank AS rank, e.start_ns AS start_ns, e.end_ns AS end_ns, s.text AS op, 1 AS eager
    FROM eager_ops e JOIN strings s ON s.id = e.op_id JOIN processes p ON p.pid = e.pid
    UNION ALL
    SELECT p.rank, c.start_ns, c.end_ns, NULL, 0
    FROM function_calls c JOIN processes p ON p.pid = c.pid
    UNION ALL
    SELECT p.rank, b.start_ns, b.end_ns, NULL, 0
    FROM function_call_buckets b JOIN processes p ON p.pid = b.pid
    UNION ALL
    SELECT p.rank, t.start_ns, t.end_ns, NULL, 0
    FROM traces t JOIN processes p ON p.pid = t.pid
), per_rank AS (
    SELECT rank,
           max(end_ns) - min(start_ns) AS active_ns,
           sum(CASE WHEN eager = 1 AND op NOT LIKE 'IteratorGetNext%' THEN 1 ELSE 0 END) AS eager_ops,
           sum(CASE WHEN eager = 1 AND op NOT LIKE 'IteratorGetNext%' THEN end_ns - start_ns ELSE 0 END) AS eager_ns,
           sum(CASE WHEN eager = 1 AND op LIKE 'IteratorGetNext%' THEN end_ns - start_ns ELSE 0 END) AS input_ns
    FROM events GROUP BY rank
), traced AS (
    -- a trace nested in another of its thread (Keras's one_step_on_data in
    -- multi_step_on_iterator's) is inside that one's time: counted once
    SELECT p.rank AS rank, count(*) AS traces,
           sum(CASE WHEN EXISTS (SELECT 1 FROM traces o WHERE o.pid = t.pid AND o.tid = t.tid AND o.id <> t.id
                                   AND o.start_ns <= t.start_ns AND o.end_ns >= t.end_ns
                                   AND (o.start_ns < t.start_ns OR o.end_ns > t.end_ns OR o.id < t.id))
                    THEN 0 ELSE t.end_ns - t.start_ns END) AS trace_ns,
           count(DISTINCT t.function_id) AS functions
    FROM traces t JOIN processes p ON p.pid = t.pid GROUP BY p.rank
), stepped AS (
    -- the step function's calls past the recording's budget (schema 7) count as steps too
    SELECT rank, sum(n) AS steps, sum(ns) AS step_total_ns FROM (
        SELECT rank, 1 AS n, end_ns - start_ns AS ns FROM steps
        UNION ALL
        SELECT p.rank, b.count, b.total_ns
        FROM function_call_buckets b
        JOIN graph_functions g ON g.id = b.graph_function_id
        JOIN functions f ON f.id = g.function_id
        JOIN strings s ON s.id = f.name_id
        JOIN processes p ON p.pid = b.pid
        WHERE p.rank IS NOT NULL AND s.text = (SELECT min(function) FROM steps)
    ) AS all_steps GROUP BY rank
)
SELECT r.rank AS rank, r.task_type AS task_type, r.task_index AS task_index, r.host AS host,
       r.source AS source, r.clock_method AS clock_method, r.clock_offset_ns AS clock_offset_ns,
       r.clock_residual_ns AS clock_residual_ns,
       coalesce(st.steps, 0) AS steps,
       CASE WHEN st.steps > 0 THEN st.step_total_ns / st.steps END AS step_ns,
       coalesce(tr.traces, 0) AS traces,
       coalesce(tr.traces, 0) - coalesce(tr.functions, 0) AS retraces,
       coalesce(tr.trace_ns, 0) AS trace_ns,
       coalesce(pr.active_ns, 0) AS active_ns,
       coalesce(pr.eager_ops, 0) AS eager_ops,
       coalesce(pr.eager_ns, 0) AS eager_ns,
       CASE WHEN pr.active_ns > 0 THEN pr.eager_ns * 1.0 / pr.active_ns END AS eager_share,
       coalesce(pr.input_ns, 0) AS input_ns,
       CASE WHEN pr.active_ns > 0 THEN pr.input_ns * 1.0 / pr.active_ns END AS input_share
FROM ranks r
LEFT JOIN per_rank pr ON pr.rank = r.rank
LEFT JOIN traced tr ON tr.rank = r.rank
LEFT JOIN stepped st ON st.rank = r.rank
ORDER BY r.rank
