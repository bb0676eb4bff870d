"""How much work the big matrix products did, for the runtime's choice of BLAS threads.

A product of M x K by K x N takes M*N*K multiply-adds; OpenBLAS runs one below 2**18 of
them on one thread whatever it is given, so only bigger ones count. The runtime
(dtfnb/runtime/blas.py) takes the count now and then: multiply-adds per second of a
process's steps, with one thread count and another, tell how many threads pay off.
"""

import threading

import numpy as np

THREADED = 1 << 18   # multiply-adds per product from which BLAS may use threads

_lock = threading.Lock()
_done = [0]          # multiply-adds since the last `take`


def matmul(xp, a, b):
    """xp.matmul(a, b), counted when it is a big product on the CPU (numpy)."""
    product = xp.matmul(a, b)
    if xp is np and a.shape[-2] * a.shape[-1] * b.shape[-1] >= THREADED:
        with _lock:
            _done[0] += product.size * a.shape[-1]   # a batch's products too
    return product


def take():
    """The multiply-adds of big products since the last call."""
    with _lock:
        done, _done[0] = _done[0], 0
    return done
