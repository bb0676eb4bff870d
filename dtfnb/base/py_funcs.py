"""The Python functions of this process's tf.py_func ops, by token ("pyfunc_0", …).

Tokens are process-local, as TensorFlow's: a graph that reaches another process carries
only the token, so its PyFunc ops run only in the process that built them (elsewhere
the lookup finds nothing). No code crosses the wire. The registry holds the functions
weakly; the graphs that call them keep them alive (ops/script_ops.py)."""

import itertools
import weakref

_FUNCS = weakref.WeakValueDictionary()
_TOKENS = itertools.count()


def insert(func):
    """Registers `func`; returns its token."""
    token = f"pyfunc_{next(_TOKENS)}"
    _FUNCS[token] = func
    return token


def get(token):
    """The function registered under `token`, or None."""
    return _FUNCS.get(token)
