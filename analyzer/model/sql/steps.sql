-- steps: one row per call of the job's step function on each rank of a
-- merged recording (agprof merge).  The step function is the Python
-- function called most often over the whole job (train_step); its calls
-- are numbered per rank in time order (step 1, 2, ...); file and line are
-- the function's def.  In synchronous
-- training the n-th step of every rank ends in the same all-reduce, so
-- rows of one step number are one barrier.
-- A view for the other queries: agprof prepends it as a WITH clause; in
-- DuckDB, CREATE VIEW steps AS <this file> (docs/fleet.md).
SELECT p.rank AS rank, c.pid AS pid, c.start_ns AS start_ns, c.end_ns AS end_ns, s.text AS function,
       fs.text AS file, f.line AS line,
       row_number() OVER (PARTITION BY p.rank ORDER BY c.start_ns, c.id) AS step
FROM function_calls c
JOIN graph_functions g ON g.id = c.graph_function_id
JOIN functions f ON f.id = g.function_id
JOIN strings s ON s.id = f.name_id
LEFT JOIN strings fs ON fs.id = f.file_id
JOIN processes p ON p.pid = c.pid
WHERE p.rank IS NOT NULL AND s.text = (
    SELECT s2.text FROM function_calls c2
    JOIN graph_functions g2 ON g2.id = c2.graph_function_id
    JOIN functions f2 ON f2.id = g2.function_id
    JOIN strings s2 ON s2.id = f2.name_id
    GROUP BY s2.text ORDER BY count(*) DESC, s2.text LIMIT 1)
