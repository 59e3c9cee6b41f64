"""Creates the file named by its first argument, and nothing else.

Used to check that `agprof run` fails BEFORE starting the workload (for
example when -o names an unwritable place): if the file exists afterwards,
the workload ran.
"""
import sys

with open(sys.argv[1], "w") as fh:
    fh.write("the workload ran\n")
print("created", sys.argv[1])
