"""Large reply tensors sent as a stream of chunks instead of inside the reply.

gRPC moves a 256 MB payload about twice as fast as a stream of 1 MiB chunks as it
does as one message, and the receiver copies each chunk into the final array while
the next one travels. A reply names such a tensor by a ticket; the receiver fetches
it at once with FetchTensor. A ticket nobody fetches (the receiver died) expires.
"""

import itertools
import threading
import time

import numpy as np

from dtfnb.base.errors import InvalidArgumentError, NotFoundError

# Below this a tensor rides inside the reply: one round trip beats the stream's two.
STREAM_THRESHOLD = 8 << 20
CHUNK_BYTES = 1 << 20


class Tickets:
    """Tensors waiting to be fetched, by ticket."""

    def __init__(self, expire_seconds=120.0):
        self._expire_seconds = expire_seconds
        self._arrays = {}    # ticket -> (flat uint8 view, created)
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()

    def put(self, array):
        """Keeps `array`'s bytes until they are fetched and returns their ticket; drops those left
        unfetched too long."""
        view = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        now = time.monotonic()
        with self._lock:
            for ticket in [t for t, (_, created) in self._arrays.items()
                           if now - created > self._expire_seconds]:
                del self._arrays[ticket]
            ticket = next(self._numbers)
            self._arrays[ticket] = (view, now)
        return ticket

    def chunks(self, ticket):
        """The tensor's bytes in chunks; each ticket can be fetched once."""
        with self._lock:
            entry = self._arrays.pop(ticket, None)
        if entry is None:
            raise NotFoundError(None, None, f"Tensor stream {ticket} is not found: already "
                                "fetched, or expired")
        view = entry[0]
        for start in range(0, len(view), CHUNK_BYTES):
            yield view[start:start + CHUNK_BYTES]


def fill(array, chunks):
    """Copies a stream of byte chunks into `array`, which they must fill exactly."""
    flat = array.reshape(-1).view(np.uint8)
    offset = 0
    for chunk in chunks:
        end = offset + len(chunk)
        if end > len(flat):
            raise InvalidArgumentError(None, None, f"A tensor stream of {len(flat)} bytes "
                                       "delivered more")
        flat[offset:end] = np.frombuffer(chunk, np.uint8)
        offset = end
    if offset != len(flat):
        raise InvalidArgumentError(None, None, f"A tensor stream of {len(flat)} bytes ended "
                                   f"after {offset}")
    return array
