-- straggler: one row per rank that arrived last at a step barrier.  A
-- rank's arrival at step n is the start of its n-th step call (steps.sql):
-- the others, already inside the step's all-reduce, wait until the last
-- one starts.  cost_ns: the waiting it caused (for each step it was last
-- at, the sum over the other ranks of last arrival - their arrival);
-- cost_share: its part of all the waiting of the job.  What it did
-- instead, between the end of its previous step and its late start:
-- trace_ns (tracing), eager_ns (eager ops, input waits excluded), input_ns
-- (eager tf.data iterator reads), other_ns (the rest: Python outside
-- TensorFlow, sleeping, I/O), and doing, the largest of the four.
-- The first step is left out: each rank reaches it after its own
-- start-up.  Uses the views steps and collectives.
WITH step_function AS (
    SELECT min(function) AS function, min(file) AS file, min(line) AS line FROM steps
), arrivals AS (
    SELECT rank, pid, step, start_ns, end_ns,
           lag(end_ns) OVER (PARTITION BY rank ORDER BY step) AS prev_end,
           max(start_ns) OVER (PARTITION BY step) AS last_start,
           count(*) OVER (PARTITION BY step) AS ranks_in_step
    FROM steps
), counted AS (
    SELECT * FROM arrivals WHERE ranks_in_step > 1 AND prev_end IS NOT NULL
), waits AS (
    SELECT step, sum(last_start - start_ns) AS wait_ns FROM counted GROUP BY step
), late AS (
    SELECT c.rank, c.pid, c.step, c.prev_end, c.start_ns, w.wait_ns,
           c.start_ns - c.prev_end AS gap_ns,
           (SELECT coalesce(sum(t.end_ns - t.start_ns), 0) FROM traces t
            WHERE t.pid = c.pid AND t.start_ns >= c.prev_end AND t.end_ns <= c.start_ns) AS trace_ns,
           (SELECT coalesce(sum(e.end_ns - e.start_ns), 0) FROM eager_ops e JOIN strings s ON s.id = e.op_id
            WHERE e.pid = c.pid AND e.start_ns >= c.prev_end AND e.end_ns <= c.start_ns
              AND s.text NOT LIKE 'IteratorGetNext%') AS eager_ns,
           (SELECT coalesce(sum(e.end_ns - e.start_ns), 0) FROM eager_ops e JOIN strings s ON s.id = e.op_id
            WHERE e.pid = c.pid AND e.start_ns >= c.prev_end AND e.end_ns <= c.start_ns
              AND s.text LIKE 'IteratorGetNext%') AS input_ns
    FROM counted c JOIN waits w ON w.step = c.step
    WHERE c.start_ns = c.last_start AND w.wait_ns > 0
), per_rank AS (
    SELECT rank, count(*) AS steps_last, sum(wait_ns) AS cost_ns, sum(gap_ns) AS gap_ns,
           sum(trace_ns) AS trace_ns, sum(eager_ns) AS eager_ns, sum(input_ns) AS input_ns,
           min(step) AS first_step
    FROM late GROUP BY rank
), job AS (
    SELECT (SELECT count(DISTINCT step) FROM counted) AS steps,
           (SELECT sum(wait_ns) FROM waits) AS total_wait_ns,
           (SELECT count(DISTINCT rank) FROM steps) AS nranks
), shaped AS (
    SELECT pr.*, CASE WHEN pr.gap_ns - pr.trace_ns - pr.eager_ns - pr.input_ns > 0
                      THEN pr.gap_ns - pr.trace_ns - pr.eager_ns - pr.input_ns ELSE 0 END AS other_ns
    FROM per_rank pr
)
SELECT sh.rank AS rank, sh.steps_last AS steps_last, job.steps AS steps, job.nranks AS ranks,
       sh.first_step AS first_step, sh.cost_ns AS cost_ns,
       CASE WHEN job.total_wait_ns > 0 THEN sh.cost_ns * 1.0 / job.total_wait_ns END AS cost_share,
       sh.gap_ns AS gap_ns, sh.trace_ns AS trace_ns, sh.eager_ns AS eager_ns, sh.input_ns AS input_ns,
       sh.other_ns AS other_ns,
       CASE WHEN sh.trace_ns >= sh.eager_ns AND sh.trace_ns >= sh.input_ns AND sh.trace_ns >= sh.other_ns THEN 'tracing'
            WHEN sh.eager_ns >= sh.input_ns AND sh.eager_ns >= sh.other_ns THEN 'eager ops'
            WHEN sh.input_ns >= sh.other_ns THEN 'waiting for input'
            ELSE 'Python outside TensorFlow (or sleeping)' END AS doing,
       fn.function AS function, fn.file AS file, fn.line AS line
FROM shaped sh CROSS JOIN job CROSS JOIN step_function fn
ORDER BY sh.cost_ns DESC
