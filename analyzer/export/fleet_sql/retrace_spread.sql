-- retrace_spread: one row per traced function (by name) whose trace count
-- differs across the recordings that traced it: most and fewest traces,
-- how many recordings traced it, and one recording with the most (the
-- least id of those).  A function that retraces on some runs only is a
-- retrace that depends on data or configuration.  Spark SQL and DuckDB.
WITH per AS (
    SELECT t.recording AS recording, s.text AS function, count(*) AS traces
    FROM traces t
    JOIN functions f ON f.recording = t.recording AND f.id = t.function_id
    JOIN strings s ON s.recording = f.recording AND s.id = f.name_id
    GROUP BY t.recording, s.text
), span AS (
    SELECT function, count(*) AS recordings, max(traces) AS most, min(traces) AS fewest, sum(traces) AS traces
    FROM per GROUP BY function
), top AS (
    SELECT p.function AS function, min(p.recording) AS recording_most
    FROM per p JOIN span sp ON sp.function = p.function AND p.traces = sp.most
    GROUP BY p.function
)
SELECT sp.function AS function, sp.recordings AS recordings, sp.most AS most, sp.fewest AS fewest,
       sp.traces AS traces, top.recording_most AS recording_most
FROM span sp JOIN top ON top.function = sp.function
WHERE sp.most > sp.fewest
ORDER BY sp.most - sp.fewest DESC, sp.function
