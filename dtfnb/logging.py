"""`tf.logging`: TensorFlow 1's logging functions, on Python's "tensorflow" logger.

TF1 code calls `tf.logging.set_verbosity(tf.logging.INFO)` and `tf.logging.info(...)`;
they go to the same logger name TensorFlow uses, so handlers set up for one see both.
"""

import logging as _logging
import sys as _sys

DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = _logging.WARN
ERROR = _logging.ERROR
FATAL = _logging.FATAL

_logger = _logging.getLogger("tensorflow")
if not _logger.handlers:
    _handler = _logging.StreamHandler(_sys.stderr)
    _handler.setFormatter(_logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
    _logger.addHandler(_handler)
    _logger.propagate = False  # as TensorFlow's: its own handler, no duplicate lines
_logger.setLevel(WARN)
_counts = {}


def get_logger():
    """The Python logger behind `tf.logging`."""
    return _logger


def log(level, msg, *args, **kwargs):
    """Logs `msg % args` at the numeric `level`."""
    _logger.log(level, msg, *args, **kwargs)


def debug(msg, *args, **kwargs):
    """Logs `msg % args` at level DEBUG."""
    _logger.debug(msg, *args, **kwargs)


def info(msg, *args, **kwargs):
    """Logs `msg % args` at level INFO."""
    _logger.info(msg, *args, **kwargs)


def warning(msg, *args, **kwargs):
    """Logs `msg % args` at level WARN."""
    _logger.warning(msg, *args, **kwargs)


warn = warning


def error(msg, *args, **kwargs):
    """Logs `msg % args` at level ERROR."""
    _logger.error(msg, *args, **kwargs)


def fatal(msg, *args, **kwargs):
    """Logs `msg % args` at level FATAL (it does not exit)."""
    _logger.fatal(msg, *args, **kwargs)


def vlog(level, msg, *args, **kwargs):
    """Logs `msg % args` at the numeric `level` (TensorFlow's verbose logging)."""
    _logger.log(level, msg, *args, **kwargs)


def _earlier_calls():
    """How many times the caller's caller has called from this line before."""
    caller = _sys._getframe(2)
    key = (caller.f_code.co_filename, caller.f_lineno)
    count = _counts.get(key, 0)
    _counts[key] = count + 1
    return count


def log_every_n(level, msg, n, *args):
    """Logs the 1st, (n+1)th, (2n+1)th ... call from the same place."""
    if _earlier_calls() % n == 0:
        _logger.log(level, msg, *args)


def log_first_n(level, msg, n, *args):
    """Logs only the first n calls from the same place."""
    if _earlier_calls() < n:
        _logger.log(level, msg, *args)


def log_if(level, msg, condition, *args):
    """Logs `msg % args` at `level` only if `condition` holds."""
    if condition:
        _logger.log(level, msg, *args)


def get_verbosity():
    """The threshold below which messages are not logged."""
    return _logger.getEffectiveLevel()


def set_verbosity(v):
    """Sets the threshold below which messages are not logged (e.g. `tf.logging.INFO`)."""
    _logger.setLevel(v)
