-- collectives: one row per collective op a rank ran (all-reduce,
-- all-gather, broadcast), with its kind and occurrence number among that
-- rank's collectives of the same kind.  Matching across ranks: the
-- recording keeps no group/instance keys for eager ops, so the n-th
-- collective of a kind on one rank is matched with the n-th of that kind
-- on the others (MultiWorkerMirroredStrategy issues them in one program
-- order on every worker).  Broadcasts pair a Send on one rank with Recvs
-- on the others: both are kind 'broadcast'.
-- A view for the other queries, like steps.sql.
WITH collective_ops AS (
    -- source 1: eager collectives
    SELECT p.rank AS rank, e.pid AS pid, e.start_ns AS start_ns, e.end_ns AS end_ns, s.text AS op
    FROM eager_ops e
    JOIN strings s ON s.id = e.op_id
    JOIN processes p ON p.pid = e.pid
    WHERE p.rank IS NOT NULL AND (s.text LIKE 'Collective%' OR s.text LIKE 'Nccl%')
    -- @graph-collectives: the ONE place for collectives run inside graph
    -- functions.  The kernels table has them (kernels -> graph_nodes with
    -- op_type 'Collective%'), but they are asynchronous kernels whose span
    -- is their dispatch only (docs/schema.md, kernels.async): their end is
    -- not the all-reduce's, so they would show no wait.  Graph-mode waits
    -- come from the step barriers (steps.sql) instead.
), kinds AS (
    SELECT rank, pid, start_ns, end_ns, op,
           CASE WHEN op LIKE '%Bcast%' OR op LIKE '%Broadcast%' THEN 'broadcast'
                WHEN op LIKE '%Gather%' THEN 'all-gather'
                WHEN op LIKE '%Reduce%' THEN 'all-reduce'
                ELSE 'other' END AS kind
    FROM collective_ops
)
SELECT rank, pid, start_ns, end_ns, op, kind,
       row_number() OVER (PARTITION BY rank, kind ORDER BY start_ns, end_ns) AS occurrence
FROM kinds
