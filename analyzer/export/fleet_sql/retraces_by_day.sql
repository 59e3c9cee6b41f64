-- retraces_by_day: per day the recordings started (UTC, recordings.start_day),
-- the recordings, how many of them retraced, their traces, retraces and
-- time tracing (the sum of the traces' spans).  Spark SQL and DuckDB.
WITH per AS (
    SELECT recording, count(*) AS traces, count(DISTINCT function_id) AS functions,
           sum(end_ns - start_ns) AS trace_ns
    FROM traces GROUP BY recording
)
SELECT r.start_day AS day, count(*) AS recordings,
       sum(CASE WHEN p.traces > p.functions THEN 1 ELSE 0 END) AS recordings_retracing,
       sum(coalesce(p.traces, 0)) AS traces,
       sum(coalesce(p.traces, 0) - coalesce(p.functions, 0)) AS retraces,
       sum(coalesce(p.trace_ns, 0)) AS trace_ns
FROM recordings r LEFT JOIN per p ON p.recording = r.recording
GROUP BY r.start_day
ORDER BY day
