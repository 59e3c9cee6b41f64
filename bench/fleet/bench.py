#!/usr/bin/env python3
"""Scale of `agprof export --fleet` against `agprof merge` + `export --format csv`.

usage: bench/fleet/bench.py [--total 1000] [--batch 100] AGPROF RECORDING

Makes TOTAL copies of RECORDING, each with its own meta recording_id (any
recording, e.g. `agprof run -o r.agprof -- python samples/retrace_shape.py`),
then grows a fleet folder batch by batch, as recordings would arrive: each
batch of BATCH recordings is exported with one `export --fleet` into the
same folder, and the time per recording is printed against the fleet's
size.  The goal: flat (an export reads one recording and writes its own
partitions; it never reads or rewrites the fleet).  At each size the
alternative, `merge` of every recording so far then `export --format csv`
of the merge, is timed too: it redoes the whole fleet for every arrival.
Also: the rows written per second, and the folder's size against the
recordings'.  Not a test: timings depend on the machine and its load.
"""
import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid


def timed(cmd):
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.exit("%s exited %d: %s" % (" ".join(cmd[:5]), p.returncode, p.stderr.decode()[-500:]))
    return time.monotonic() - t0


def copies(src, d, n):
    paths = []
    for i in range(n):
        p = os.path.join(d, "r%05d.agprof" % i)
        shutil.copyfile(src, p)
        db = sqlite3.connect(p)
        db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('recording_id', ?)", (str(uuid.uuid4()),))
        db.commit()
        db.close()
        paths.append(p)
    return paths


def du(path):
    total = 0
    for root, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--total", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--merge-every", type=int, default=5, help="time merge + export at every Nth batch")
    ap.add_argument("agprof")
    ap.add_argument("recording")
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="agprof-fleet-bench-")
    try:
        paths = copies(a.recording, d, a.total)
        fleet = os.path.join(d, "fleet")
        print("%8s %14s %16s %20s" % ("fleet", "ms/recording", "merge+export s", "merge+export ms/rec"))
        for start in range(0, a.total, a.batch):
            batch = paths[start:start + a.batch]
            t = timed([a.agprof, "export", "--format", "csv", "--fleet", fleet] + batch)
            size = start + len(batch)
            line = "%8d %14.1f" % (size, 1000 * t / len(batch))
            if (start // a.batch + 1) % a.merge_every == 0 or size == a.batch:
                merged = os.path.join(d, "merged.agprof")
                tm = timed([a.agprof, "merge", "-o", merged] + paths[:size])
                tm += timed([a.agprof, "export", "--format", "csv", "-o", os.path.join(d, "csv"), merged])
                os.remove(merged)
                line += " %16.2f %20.1f" % (tm, 1000 * tm / size)
            print(line, flush=True)
        print("folder %.1f MiB for %.1f MiB of recordings" % (du(fleet) / 2**20, sum(map(os.path.getsize, paths)) / 2**20))
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
