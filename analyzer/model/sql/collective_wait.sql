-- collective_wait: one row per rank: the time it spent waiting for the
-- other ranks at collectives, as a share of its step time (step_ns: the
-- sum of its step periods, from the end of one step to the end of the
-- next, so that what a rank does between steps counts as its own time).
-- Waits at collectives matched across ranks (collectives.sql, match_key:
-- by group/instance keys when recorded, else by kind and occurrence):
--   graph collectives (graph = 1, spans from dispatch to completion):
--     measured, its span minus the shortest span of the same collective
--     on any rank (what the last rank to arrive pays for the transfer
--     itself); no clock alignment needed;
--   eager collectives: from its start to the last rank's start of the
--     same collective.
-- At the step barriers (steps.sql: from its arrival to the last rank's,
-- the all-reduce inside the step), estimated, for the ranks without graph
-- collectives only: with them the barrier is those collectives, measured.
-- waited_for: the rank it waited for most at the step barriers.  The first
-- step is left out (start-up), and so are the collectives that start
-- before the rank's first step ended.
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
), first_end AS (
    SELECT rank, min(end_ns) AS end_ns FROM steps WHERE step = 1 GROUP BY rank
), coll AS (
    SELECT c.rank, c.graph, c.start_ns, c.end_ns,
           max(c.start_ns) OVER (PARTITION BY c.match_key) AS last_start,
           min(c.end_ns - c.start_ns) OVER (PARTITION BY c.match_key) AS min_span,
           count(*) OVER (PARTITION BY c.match_key) AS ranks_in
    FROM collectives c JOIN first_end f ON f.rank = c.rank
    WHERE c.start_ns >= f.end_ns
), coll_waits AS (
    SELECT rank, count(*) AS collectives, sum(graph) AS graph_collectives,
           sum(CASE WHEN graph = 1 THEN end_ns - start_ns - min_span ELSE last_start - start_ns END) AS wait_ns
    FROM coll WHERE ranks_in > 1 GROUP BY rank
), per_rank AS (
    SELECT rank, count(*) AS steps, sum(wait_ns) AS wait_ns, sum(step_ns) AS step_ns FROM step_waits GROUP BY rank
), totals AS (
    SELECT pr.rank, pr.steps, pr.step_ns, pr.wait_ns AS step_wait_ns,
           coalesce(cw.wait_ns, 0) AS collective_wait_ns, coalesce(cw.collectives, 0) AS collectives,
           coalesce(cw.graph_collectives, 0) AS graph_collectives,
           CASE WHEN coalesce(cw.graph_collectives, 0) > 0 THEN coalesce(cw.wait_ns, 0)
                ELSE pr.wait_ns + coalesce(cw.wait_ns, 0) END AS wait_ns
    FROM per_rank pr LEFT JOIN coll_waits cw ON cw.rank = pr.rank
), blame AS (
    SELECT rank, last_rank, sum(wait_ns) AS wait_ns,
           row_number() OVER (PARTITION BY rank ORDER BY sum(wait_ns) DESC, last_rank) AS pick
    FROM step_waits WHERE last_rank <> rank GROUP BY rank, last_rank
)
SELECT t.rank AS rank, t.steps AS steps, t.step_ns AS step_ns, t.step_wait_ns AS step_wait_ns,
       t.collective_wait_ns AS collective_wait_ns, t.collectives AS collectives,
       t.graph_collectives AS graph_collectives, t.wait_ns AS wait_ns,
       CASE WHEN t.step_ns > 0 THEN t.wait_ns * 1.0 / t.step_ns END AS wait_share,
       b.last_rank AS waited_for,
       fn.function AS function, fn.file AS file, fn.line AS line
FROM totals t CROSS JOIN step_function fn
LEFT JOIN blame b ON b.rank = t.rank AND b.pick = 1
ORDER BY t.rank
