-- rank_retrace: one row per traced function whose trace count differs
-- across the ranks of a merged recording: most (traces on the ranks that
-- traced it most, listed in ranks_most) and fewest.  A retrace on some
-- ranks only stalls every other rank at the next collective.  cause and
-- detail are left empty here; agprof fills them from its retrace
-- explanation of the first extra trace on the rank pid (docs/rules.md).
WITH per AS (
    SELECT s.text AS function, p.rank AS rank, count(*) AS traces, sum(t.end_ns - t.start_ns) AS trace_ns,
           min(f.pid) AS pid, min(f.line) AS line, min(fs.text) AS file
    FROM traces t
    JOIN functions f ON f.id = t.function_id
    JOIN strings s ON s.id = f.name_id
    LEFT JOIN strings fs ON fs.id = f.file_id
    JOIN processes p ON p.pid = t.pid
    WHERE p.rank IS NOT NULL
    GROUP BY s.text, p.rank
), grid AS (
    SELECT n.function, r.rank, coalesce(per.traces, 0) AS traces, coalesce(per.trace_ns, 0) AS trace_ns,
           per.pid AS pid, per.file AS file, per.line AS line
    FROM (SELECT DISTINCT function FROM per) n
    CROSS JOIN ranks r
    LEFT JOIN per ON per.function = n.function AND per.rank = r.rank
), span AS (
    SELECT function, max(traces) AS most, min(traces) AS fewest, count(*) AS ranks,
           min(file) AS file, min(line) AS line
    FROM grid GROUP BY function
)
SELECT sp.function AS function, sp.file AS file, sp.line AS line, sp.most AS most, sp.fewest AS fewest,
       sp.ranks AS ranks,
       (SELECT group_concat(CAST(g.rank AS TEXT), ',') FROM grid g
        WHERE g.function = sp.function AND g.traces = sp.most) AS ranks_most,
       (SELECT count(*) FROM grid g WHERE g.function = sp.function AND g.traces = sp.most) AS nranks_most,
       (SELECT min(g.pid) FROM grid g WHERE g.function = sp.function AND g.traces = sp.most) AS pid,
       (SELECT max(g.trace_ns) - min(g.trace_ns) FROM grid g WHERE g.function = sp.function) AS cost_ns,
       '' AS cause, '' AS detail
FROM span sp
WHERE sp.most > sp.fewest
ORDER BY sp.most - sp.fewest DESC, sp.function
