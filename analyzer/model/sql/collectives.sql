-- collectives: one row per collective op a rank ran (all-reduce,
-- all-gather, broadcast), eager or inside a graph function (graph = 1),
-- with what names the same collective on every rank, match_key:
--   'k:GROUP:INSTANCE:N' when its keys were recorded (collective_execs,
--   schema 5): the N-th execution of (group_key, instance_key) on its rank
--   (a tf.function may reissue one instance key at every call);
--   'o:KIND:N' without keys (recordings before schema 5: eager ops only;
--   a V1 collective in a graph): the N-th collective of that kind among
--   its rank's unkeyed ones (MultiWorkerMirroredStrategy issues them in one
--   program order on every worker).
-- occurrence is that N.  Broadcasts pair a Send on one rank with Recvs on
-- the others: both are kind 'broadcast' and share their keys.  tid: the
-- thread that ran (eager) or dispatched (graph) it.  A graph
-- collective's span is dispatch to done callback (it includes its wait for
-- the other ranks); an eager one's is TFE_Execute's.
-- A view for the other queries, like steps.sql.
WITH collective_ops AS (
    -- source 1 (schema 5): every collective, eager and graph, with its keys
    SELECT p.rank AS rank, c.pid AS pid, c.tid AS tid, c.start_ns AS start_ns, c.end_ns AS end_ns, s.text AS op,
           c.graph AS graph, c.group_key AS group_key, c.instance_key AS instance_key
    FROM collective_execs c
    JOIN strings s ON s.id = c.op_id
    JOIN processes p ON p.pid = c.pid
    WHERE p.rank IS NOT NULL
    UNION ALL
    -- source 2 (before schema 5): eager collectives, no keys, of the
    -- processes that have no collective_execs rows
    SELECT p.rank, e.pid, e.tid, e.start_ns, e.end_ns, s.text, 0, NULL, NULL
    FROM eager_ops e
    JOIN strings s ON s.id = e.op_id
    JOIN processes p ON p.pid = e.pid
    WHERE p.rank IS NOT NULL AND (s.text LIKE 'Collective%' OR s.text LIKE 'Nccl%')
      AND NOT EXISTS (SELECT 1 FROM collective_execs c2 WHERE c2.pid = e.pid)
), kinds AS (
    SELECT rank, pid, tid, start_ns, end_ns, op, graph, group_key, instance_key,
           CASE WHEN op LIKE '%Bcast%' OR op LIKE '%Broadcast%' THEN 'broadcast'
                WHEN op LIKE '%Gather%' THEN 'all-gather'
                WHEN op LIKE '%Reduce%' THEN 'all-reduce'
                ELSE 'other' END AS kind,
           group_key IS NOT NULL AND instance_key IS NOT NULL AS keyed
    FROM collective_ops
), numbered AS (
    SELECT *,
           row_number() OVER (PARTITION BY rank, keyed, CASE WHEN keyed THEN group_key END,
                                           CASE WHEN keyed THEN instance_key END, CASE WHEN keyed THEN NULL ELSE kind END
                              ORDER BY start_ns, end_ns) AS occurrence
    FROM kinds
)
SELECT rank, pid, tid, start_ns, end_ns, op, kind, graph, group_key, instance_key, occurrence,
       CASE WHEN keyed THEN 'k:' || CAST(group_key AS VARCHAR) || ':' || CAST(instance_key AS VARCHAR) || ':'
            ELSE 'o:' || kind || ':' END || CAST(occurrence AS VARCHAR) AS match_key
FROM numbered
