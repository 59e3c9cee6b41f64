#!/usr/bin/env python3
"""Make tests/fuzz/base-current.agprof, the current-schema base of the recording harness.

    build/cmd/agprof/agprof run -o /tmp/step.agprof -- python samples/py_function_step.py
    tests/fuzz/make_base.py /tmp/step.agprof

The recording is cut down so that one analysis is short (the first 120
kernels and 100 black-box runs), given two GPU activity rows, one API
call and one external id by hand (the GPU paths are reached without a
GPU), and vacuumed into 512-byte pages.  base.agprof (schema 1, whose
every connection also runs the compat step) stays the suite's base.
"""
import os
import shutil
import sqlite3
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, 'base-current.agprof')

src = sys.argv[1]
tmp = OUT + '.tmp'
shutil.copyfile(src, tmp)
db = sqlite3.connect(tmp)
db.execute('DELETE FROM kernels WHERE id NOT IN (SELECT id FROM kernels ORDER BY id LIMIT 120)')
db.execute('DELETE FROM blackbox_execs WHERE rowid NOT IN (SELECT rowid FROM blackbox_execs ORDER BY rowid LIMIT 100)')
pid, tid, start = db.execute('SELECT pid, tid, start_ns FROM function_calls ORDER BY id LIMIT 1').fetchone()
name = db.execute("SELECT id FROM strings ORDER BY id LIMIT 1").fetchone()[0]
db.execute('INSERT INTO gpu_activity (pid, kind, name_id, device, context, stream, start_ns, end_ns,'
           ' correlation_id, grid_x, grid_y, grid_z, block_x, block_y, block_z)'
           " VALUES (?, 'kernel', ?, 0, 1, 7, ?, ?, 11, 8, 8, 1, 128, 1, 1)", (pid, name, start + 500, start + 50500))
db.execute('INSERT INTO gpu_activity (pid, kind, device, context, stream, start_ns, end_ns, correlation_id, bytes,'
           " copy_kind) VALUES (?, 'memcpy', 0, 1, 7, ?, ?, 12, 4096, 'HtoD')", (pid, start + 59500, start + 61500))
db.execute('INSERT INTO gpu_api_calls (pid, tid, api, start_ns, end_ns, correlation_id, external_id)'
           " VALUES (?, ?, 'cuLaunchKernel', ?, ?, 11, 1)", (pid, tid, start, start + 400))
db.execute("INSERT INTO gpu_external_ids VALUES (?, 1, 'function_calls', 1)", (pid,))
db.commit()
db.execute('PRAGMA journal_mode=DELETE')
db.execute('PRAGMA page_size=512')
db.execute('VACUUM')
db.close()
os.replace(tmp, OUT)
print('%s: %d bytes' % (OUT, os.path.getsize(OUT)))
