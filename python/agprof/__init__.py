"""agprof from Python: record a block of a running TensorFlow program and read its report.

    import agprof
    with agprof.record("train.agprof"):
        train()
    findings = agprof.report("train.agprof")["findings"]

In Keras: `model.fit(..., callbacks=[agprof.keras.Callback("train.agprof")])`
(agprof/keras.py).  In IPython or Jupyter: `%load_ext agprof`, then `%%agprof` on a cell.  The
`agprof` command and `python -m agprof` are the same program as the C agprof.
"""
from ._record import (AgprofError, AgprofWarning, is_recording, last_recording, record, start,
                      stop)
from ._report import check, report
from ._ipython import load_ipython_extension, unload_ipython_extension
from . import keras  # imports no Keras until a Callback is made

__version__ = "0.1.0"
__all__ = ["AgprofError", "AgprofWarning", "check", "is_recording", "last_recording", "record",
           "report", "start", "stop", "keras", "load_ipython_extension", "unload_ipython_extension"]
