-- collective_wait: one row per rank: the time it spent waiting for the
-- other ranks at collectives, as a share of its step time (step_ns: the
-- sum of its step periods, from the end of one step to the end of the
-- next, so that what a rank does between steps counts as its own time).  Two kinds of
-- waits: at each step barrier (steps.sql: from its arrival to the last
-- rank's, the all-reduce inside the step), and at each eager collective
-- (collectives.sql, matched across ranks by kind and occurrence: from its
-- start to the last rank's start of the same collective).  waited_for:
-- the rank it waited for most.  The first step is left out (start-up).
-- Uses the views steps and collectives.
WITH step_function AS (
    SELECT min(function) AS function, min(file) AS file, min(line) AS line FROM steps
), arrivals AS (
    SELECT rank, step, start_ns, end_ns,
           lag(end_ns) OVER (PARTITION BY rank ORDER BY step) AS prev_end,
           max(start_ns) OVER (PARTITION BY step) AS last_start,
           count(*) OVER (PARTITION BY step) AS ranks_in_step
    FROM steps
), step_waits AS (
    SELECT a.rank, a.step, a.last_start - a.start_ns AS wait_ns, a.end_ns - a.prev_end AS step_ns,
           (SELECT min(b.rank) FROM arrivals b WHERE b.step = a.step AND b.start_ns = a.last_start) AS last_rank
    FROM arrivals a WHERE a.ranks_in_step > 1 AND a.prev_end IS NOT NULL
), coll AS (
    SELECT rank, kind, occurrence, start_ns,
           max(start_ns) OVER (PARTITION BY kind, occurrence) AS last_start,
           count(*) OVER (PARTITION BY kind, occurrence) AS ranks_in
    FROM collectives
), coll_waits AS (
    SELECT rank, count(*) AS collectives, sum(last_start - start_ns) AS wait_ns
    FROM coll WHERE ranks_in > 1 GROUP BY rank
), per_rank AS (
    SELECT rank, count(*) AS steps, sum(wait_ns) AS wait_ns, sum(step_ns) AS step_ns FROM step_waits GROUP BY rank
), blame AS (
    SELECT rank, last_rank, sum(wait_ns) AS wait_ns,
           row_number() OVER (PARTITION BY rank ORDER BY sum(wait_ns) DESC, last_rank) AS pick
    FROM step_waits WHERE last_rank <> rank GROUP BY rank, last_rank
)
SELECT pr.rank AS rank, pr.steps AS steps, pr.step_ns AS step_ns,
       pr.wait_ns AS step_wait_ns, coalesce(cw.wait_ns, 0) AS collective_wait_ns,
       coalesce(cw.collectives, 0) AS collectives,
       pr.wait_ns + coalesce(cw.wait_ns, 0) AS wait_ns,
       CASE WHEN pr.step_ns > 0 THEN (pr.wait_ns + coalesce(cw.wait_ns, 0)) * 1.0 / pr.step_ns END AS wait_share,
       b.last_rank AS waited_for,
       fn.function AS function, fn.file AS file, fn.line AS line
FROM per_rank pr CROSS JOIN step_function fn
LEFT JOIN coll_waits cw ON cw.rank = pr.rank
LEFT JOIN blame b ON b.rank = pr.rank AND b.pick = 1
ORDER BY pr.rank
