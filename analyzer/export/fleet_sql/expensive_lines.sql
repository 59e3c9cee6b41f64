-- expensive_lines: the user's source lines that cost the most across the
-- fleet: the traces their calls started and the eager ops they dispatched
-- (rows and past-budget buckets; an op's time with the Python before it),
-- with the time of each, over how many
-- recordings.  A call site in library code counts for the user's line
-- that called it (its parent_id, one frame out).  Files are the paths
-- recorded: the same program run from another folder is another file.
-- The 20 most expensive lines.  Spark SQL and DuckDB.
WITH sites AS (
    SELECT c.recording AS recording, c.id AS id,
           CASE WHEN c.library = 1 AND p.id IS NOT NULL THEN p.file_id ELSE c.file_id END AS file_id,
           CASE WHEN c.library = 1 AND p.id IS NOT NULL THEN p.line ELSE c.line END AS line
    FROM callsites c LEFT JOIN callsites p ON p.recording = c.recording AND p.id = c.parent_id
), ev AS (
    SELECT recording, callsite_id AS site, 1 AS traces, end_ns - start_ns AS trace_ns, 0 AS eager_ops, 0 AS eager_ns
    FROM traces
    UNION ALL
    SELECT recording, callsite_id, 0, 0, 1, end_ns - start_ns + python_ns FROM eager_ops
    UNION ALL
    SELECT recording, callsite_id, 0, 0, count, total_ns + python_ns FROM eager_op_buckets
)
SELECT f.text AS file, s.line AS line, count(DISTINCT ev.recording) AS recordings,
       sum(ev.traces) AS traces, sum(ev.trace_ns) AS trace_ns,
       sum(ev.eager_ops) AS eager_ops, sum(ev.eager_ns) AS eager_ns,
       sum(ev.trace_ns + ev.eager_ns) AS total_ns
FROM ev
JOIN sites s ON s.recording = ev.recording AND s.id = ev.site
JOIN strings f ON f.recording = s.recording AND f.id = s.file_id
GROUP BY f.text, s.line
ORDER BY total_ns DESC, file, line
LIMIT 20
