"""Pass-through check: output, input and exit status must reach the caller
untouched under `agprof run`.

Writes known lines to stdout and stderr (including bytes that are not UTF-8
and a line without a final newline), echoes what it reads on stdin, runs a
couple of eager ops, then exits with status 3 (or the status given as the
first argument).
"""
import sys

import tensorflow as tf

import oracle


def main():
    status = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    z = tf.add(tf.constant(2), tf.constant(3))
    sys.stdout.write("stdout line 1: %d\n" % int(z))
    sys.stdout.flush()
    sys.stderr.write("stderr line 1\n")
    sys.stderr.flush()
    sys.stdout.buffer.write(b"raw bytes \xff\xfe\x00 end\n")
    sys.stdout.flush()
    data = sys.stdin.read()
    sys.stdout.write("stdin had %d bytes: %r\n" % (len(data), data))
    sys.stdout.write("no newline at the end")
    sys.stdout.flush()
    sys.stderr.write("stderr last")
    sys.stderr.flush()
    oracle.write()
    sys.exit(status)


if __name__ == "__main__":
    main()
