"""Large reply tensors travel as chunk streams named by tickets."""

import numpy as np
import pytest

import dtfnb as tf
from dtfnb.distributed_runtime.transport import streams


def test_a_ticket_streams_its_tensor_once_in_chunks():
    tickets = streams.Tickets()
    value = np.arange(3 * streams.CHUNK_BYTES // 8 + 5, dtype=np.float64)
    ticket = tickets.put(value)
    chunks = [bytes(c) for c in tickets.chunks(ticket)]
    assert len(chunks) == 4 and all(len(c) == streams.CHUNK_BYTES for c in chunks[:3])
    got = streams.fill(np.empty_like(value), chunks)
    np.testing.assert_array_equal(got, value)
    with pytest.raises(tf.errors.NotFoundError, match="already fetched, or expired"):
        list(tickets.chunks(ticket))


def test_unfetched_tickets_expire():
    tickets = streams.Tickets(expire_seconds=0.0)
    old = tickets.put(np.zeros(4))
    tickets.put(np.zeros(4))  # putting sweeps what expired
    with pytest.raises(tf.errors.NotFoundError):
        list(tickets.chunks(old))


@pytest.mark.parametrize("chunks, message", [([b"\0" * 8], "ended after 8"),
                                             ([b"\0" * 24], "delivered more")])
def test_a_stream_must_fill_its_tensor_exactly(chunks, message):
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        streams.fill(np.empty(2), chunks)
