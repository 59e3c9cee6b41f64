"""A real TensorBoard over LOGDIR with the agprof tab, on 127.0.0.1 and a port the system picks.

    tensorboard_serve.py LOGDIR

The package is not pip-installed in the test's venv, so TensorBoard's own search of the entry
points would not find the tab: this loads the object the entry point in pyproject.toml names
(module:attribute, as TensorBoard's entry_point.load() does) and hands it to TensorBoard with
its default plugins.  TensorBoard prints "TensorBoard ... at http://127.0.0.1:PORT/" on stderr.
"""
import importlib
import os
import sys
import tomllib

SOURCE_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def entry_point():
    """The object pyproject.toml's tensorboard_plugins entry point `agprof` names."""
    with open(os.path.join(SOURCE_ROOT, "pyproject.toml"), "rb") as f:
        spec = tomllib.load(f)["project"]["entry-points"]["tensorboard_plugins"]["agprof"]
    module, _, attr = spec.partition(":")
    return importlib.import_module(module), attr


def main():
    from tensorboard import default, program
    module, attr = entry_point()
    tb = program.TensorBoard(plugins=default.get_plugins() + [getattr(module, attr)])
    tb.configure(argv=[None, "--logdir", sys.argv[1], "--host", "127.0.0.1", "--port", "0",
                       "--load_fast", "false", "--reload_interval", "0"])
    sys.exit(tb.main())


if __name__ == "__main__":
    main()
