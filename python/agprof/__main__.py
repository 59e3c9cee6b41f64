"""`python -m agprof ...` and the `agprof` command of the wheel: the same
program as the C `agprof`, which replaces this Python process (exit status,
signals and terminal are the program's own)."""
import os
import sys

from ._paths import agprof_binary


def main():
    try:
        exe = agprof_binary()
    except FileNotFoundError as e:
        sys.stderr.write("error: %s\n" % e)
        return 3
    os.execv(exe, ["agprof"] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
