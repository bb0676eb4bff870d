"""Shared-memory hand-off between processes on one host (transport/shm.py)."""

import gc
import json
import os
import subprocess
import sys
import threading

import ml_dtypes
import numpy as np
import pytest

from dtfnb.base.errors import InvalidArgumentError
from dtfnb.distributed_runtime.transport import shm
from dtfnb.protos import wire_pb2
from tests.helpers import ROOT

pytestmark = pytest.mark.skipif(not shm.available, reason="needs Linux memfd and /proc")

ME = os.getpid()   # the receiver named in the leases here

# Another task on this host: answers one JSON line per request line. Messages travel
# serialized, as they would on the wire.
PEER_SCRIPT = """
import gc, json, sys
import ml_dtypes, numpy as np
from dtfnb.distributed_runtime.transport import shm
from dtfnb.protos import wire_pb2

released = []
for line in sys.stdin:
    msg = json.loads(line)
    reply = {"peer": shm.local_peer().SerializeToString().hex()}
    if "peer" in msg:
        reply["can_map"] = shm.can_map(wire_pb2.PeerInfo.FromString(bytes.fromhex(msg["peer"])))
    if "shared" in msg:
        shared = wire_pb2.SharedSlice.FromString(bytes.fromhex(msg["shared"]))
        array = shm.mappings().view(shared, msg["sender"], np.dtype(msg["dtype"]), msg["shape"],
                                    released.append)
        reply["bytes"] = array.tobytes().hex()
        if "fill" in msg:
            array[...] = msg["fill"]
        del array
        gc.collect()
        reply["released"] = released
    print(json.dumps(reply), flush=True)
"""


class Peer:
    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, "-c", PEER_SCRIPT], cwd=ROOT, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def ask(self, **msg):
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"the peer process died (exit code {self.proc.poll()})"
        return json.loads(line)

    def view(self, shared, dtype, shape, **msg):
        reply = self.ask(shared=shared.SerializeToString().hex(), sender=os.getpid(),
                         dtype=np.dtype(dtype).name, shape=list(shape), **msg)
        return bytes.fromhex(reply["bytes"]), reply["released"]


@pytest.fixture(scope="module")
def peer():
    peer = Peer()
    yield peer
    peer.proc.stdin.close()
    peer.proc.wait(timeout=10)


@pytest.fixture
def pool():
    pool = shm.BlockPool()
    yield pool
    pool.close()


ARRAYS = {
    "float32": np.random.default_rng(0).standard_normal((300, 200)).astype(np.float32),
    "int64": np.arange(-50_000, 50_000, dtype=np.int64).reshape(100, 1000),
    "bool": np.random.default_rng(1).random(100_000) > 0.5,
    "strided": np.arange(200 * 300, dtype=np.float64).reshape(200, 300)[::3, 1::2].T,
    "bfloat16": np.linspace(-4, 4, 70_000).astype(ml_dtypes.bfloat16),
    "scalar": np.array(7.5, np.float16),
}


def test_a_peer_process_can_map_our_blocks_and_we_can_map_its(peer):
    reply = peer.ask(peer=shm.local_peer().SerializeToString().hex())
    assert reply["can_map"] is True
    theirs = wire_pb2.PeerInfo.FromString(bytes.fromhex(reply["peer"]))
    assert theirs.pid == peer.proc.pid and theirs.instance != shm.local_peer().instance
    assert shm.can_map(theirs)


@pytest.mark.parametrize("name", ARRAYS)
def test_a_peer_process_sees_the_exact_contents(peer, pool, name):
    array = ARRAYS[name]
    shared = pool.lend(array, ME)
    assert shared.owner == shm.local_peer().instance and shared.pid == os.getpid()
    assert shared.block_size >= array.nbytes and shared.block_size % 4096 == 0
    data, released = peer.view(shared, array.dtype, array.shape)
    assert data == np.ascontiguousarray(array).tobytes()
    assert released[-1] == shared.block_id


def test_receiver_writes_land_in_the_block_and_reuse_after_give_back_still_works(peer, pool):
    first = np.arange(50_000, dtype=np.int32)
    shared = pool.lend(first, ME)
    data, released = peer.view(shared, first.dtype, first.shape, fill=-1)
    assert data == first.tobytes() and released[-1] == shared.block_id
    # Zero copy: the receiver wrote into the very block we own.
    ours = shm.Mappings().view(shared, os.getpid(), first.dtype, first.shape, lambda _: None)
    assert (ours == -1).all()
    del ours
    pool.give_back(ME, [shared.block_id])

    second = np.arange(50_000, 0, -1, dtype=np.int32)
    again = pool.lend(second, ME)
    assert again.block_id == shared.block_id
    data, _ = peer.view(again, second.dtype, second.shape)
    assert data == second.tobytes()


def test_lend_reuses_a_given_back_block_and_makes_a_new_one_while_leased(pool):
    array = np.ones(100_000, np.float32)
    a = pool.lend(array, ME)
    b = pool.lend(array, ME)
    assert b.block_id != a.block_id and b.fd != a.fd
    pool.give_back(ME, [a.block_id])
    pool.give_back(ME, [a.block_id, 12345])  # twice, and unknown: harmless
    c = pool.lend(array[:60_000], ME)  # fits: at most twice its size
    assert c.block_id == a.block_id
    pool.give_back(ME, [c.block_id])
    assert pool.lend(array[:1000], ME).block_id not in (a.block_id, b.block_id)  # too big


def test_only_the_receiver_of_a_lease_ends_it(pool):
    # Another peer that names the block must not free it for reuse while the receiver
    # still reads it: the next lend would write over the receiver's tensor.
    array = np.ones(100_000, np.uint8)
    shared = pool.lend(array, 1234)
    pool.give_back(None, [shared.block_id])   # from a call that names no process (gRPC)
    pool.give_back(5678, [shared.block_id])   # from another process
    assert pool.lend(array, 5678).block_id != shared.block_id   # still leased
    pool.give_back(1234, [shared.block_id])
    assert pool.lend(array, 5678).block_id == shared.block_id


def test_lend_returns_none_over_the_limit():
    small = shm.BlockPool(limit_bytes=1 << 20)
    try:
        a, _ = (small.lend(np.zeros(400_000, np.uint8), ME) for _ in range(2))
        assert small.lend(np.zeros(400_000, np.uint8), ME) is None  # 1.2 MB would be leased
        small.give_back(ME, [a.block_id])
        assert small.lend(np.zeros(400_000, np.uint8), ME).block_id == a.block_id
    finally:
        small.close()


def test_free_blocks_beyond_half_the_limit_are_closed_oldest_first():
    small = shm.BlockPool(limit_bytes=10 << 20)
    try:
        sizes = [3 << 20, 2 << 20, 1 << 20]
        leases = [small.lend(np.zeros(n, np.uint8), ME).block_id for n in sizes]
        small.give_back(ME, leases)  # 6 MiB free, more than half the limit: the oldest goes
        again = [small.lend(np.zeros(n, np.uint8), ME).block_id for n in sizes]
        assert again[0] not in leases and again[1:] == leases[1:]
    finally:
        small.close()


def test_free_blocks_make_room_for_a_new_block_within_the_limit():
    mib = 1 << 20
    small = shm.BlockPool(limit_bytes=10 * mib)
    try:
        four = small.lend(np.zeros(4 * mib, np.uint8), ME).block_id
        small.give_back(ME, [four])
        small.lend(np.zeros(1 * mib, np.uint8), ME)
        small.lend(np.zeros(6 * mib, np.uint8), ME)  # 1 + 6 leased + 4 free > 10: 4 is closed
        assert small.lend(np.zeros(3 * mib, np.uint8), ME).block_id != four
    finally:
        small.close()


def test_lend_is_thread_safe(pool):
    leases, errors = [], []

    def work(k):
        try:
            for i in range(20):
                array = np.full(20_000, k * 100 + i, np.int64)
                shared = pool.lend(array, ME)
                view = shm.Mappings().view(shared, os.getpid(), array.dtype, array.shape,
                                           lambda _: None)
                assert (view == k * 100 + i).all()
                del view
                leases.append(shared.block_id)
                pool.give_back(ME, [shared.block_id])
        except Exception as e:  # reported below: a thread's assert would vanish
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(set(leases)) <= 4  # never more blocks than leases held at once


def test_an_array_made_in_a_block_is_lent_as_it_is_read_only_and_never_copied(peer, pool):
    array = pool.empty((300, 200), np.float32)
    array[...] = ARRAYS["float32"]
    first, second = pool.lend(array, ME), pool.lend(array.reshape(-1), ME)  # view of all
    assert first.read_only and first.block_id == second.block_id  # the array's own block
    data, released = peer.view(first, np.float32, array.shape)
    assert data == ARRAYS["float32"].tobytes() and released[-1] == first.block_id
    copied = pool.lend(array[1:], ME)  # not where the block starts: a copy
    assert not copied.read_only and copied.block_id != first.block_id
    assert not pool.lend(ARRAYS["float32"], ME).read_only  # any other array: a copy
    assert pool.empty((10,), np.float32) is None  # too small to share: made elsewhere


def test_a_made_arrays_block_is_reused_only_once_it_died_and_every_lease_ended(pool):
    array = pool.empty((100_000,), np.float32)
    block_id = pool.lend(array, ME).block_id
    pool.give_back(ME, [block_id])
    assert pool.lend(np.ones(100_000, np.float32), ME).block_id != block_id  # it still lives
    pool.lend(array, ME)
    del array
    gc.collect()
    assert pool.lend(np.ones(100_000, np.float32), ME).block_id != block_id  # still leased
    pool.give_back(ME, [block_id])
    again = pool.empty((100_000,), np.float32)
    assert pool.lend(again, ME).block_id == block_id


def test_on_release_fires_once_when_the_array_and_its_views_are_gone(pool):
    array = np.arange(30_000, dtype=np.float32).reshape(100, 300)
    shared = pool.lend(array, ME)
    released = []
    view = shm.Mappings().view(shared, os.getpid(), array.dtype, array.shape, released.append)
    assert view.flags.writeable and np.array_equal(view, array)
    column, flat = view[:, 7], view.reshape(-1)
    del view
    gc.collect()
    assert released == []
    del column
    gc.collect()
    assert released == []
    del flat
    gc.collect()
    assert released == [shared.block_id]
    gc.collect()
    assert released == [shared.block_id]


def test_mapping_the_same_block_again_reuses_the_cached_mapping(pool, monkeypatch):
    opened = []
    open_peer_fd = shm._open_peer_fd
    monkeypatch.setattr(shm, "_open_peer_fd", lambda *a: opened.append(a) or open_peer_fd(*a))
    maps = shm.Mappings()
    shared = pool.lend(np.ones(100_000, np.uint8), ME)
    for value in (1, 2):
        pool.give_back(ME, [shared.block_id])
        shared = pool.lend(np.full(100_000, value, np.uint8), ME)
        assert (maps.view(shared, os.getpid(), np.uint8, (100_000,), lambda _: None) == value).all()
    assert len(opened) == 1


def test_unused_mappings_beyond_the_budget_are_closed_and_used_ones_kept(pool, monkeypatch):
    opened = []
    open_peer_fd = shm._open_peer_fd
    monkeypatch.setattr(shm, "_open_peer_fd", lambda *a: opened.append(a) or open_peer_fd(*a))
    maps = shm.Mappings(limit_bytes=1 << 20)
    me = os.getpid()
    blocks = [pool.lend(np.full(600_000, k, np.uint8), ME) for k in range(3)]
    kept = maps.view(blocks[0], me, np.uint8, (600_000,), lambda _: None)
    for shared in blocks[1:]:
        maps.view(shared, me, np.uint8, (600_000,), lambda _: None)  # dropped at once
    assert (kept == 0).all()  # still in use: not closed, though over the budget
    maps.view(blocks[2], me, np.uint8, (600_000,), lambda _: None)  # the latest one stays cached
    assert len(opened) == 3
    maps.view(blocks[1], me, np.uint8, (600_000,), lambda _: None)  # closed: mapped again
    assert len(opened) == 4
    maps.view(blocks[0], me, np.uint8, (600_000,), lambda _: None)  # in use all along: cached
    assert len(opened) == 4


def test_a_block_that_cannot_be_opened_is_invalid_argument_naming_pid_and_fd():
    # The sender's error, never retried as an unavailable task would be.
    read_end, write_end = os.pipe()
    os.close(write_end)
    os.close(read_end)  # now a closed fd number
    shared = wire_pb2.SharedSlice(owner=1, pid=os.getpid(), fd=read_end, block_id=1,
                                  block_size=4096)
    with pytest.raises(InvalidArgumentError, match=f"fd {read_end} of process {os.getpid()}"):
        shm.Mappings().view(shared, os.getpid(), np.uint8, (10,), lambda _: None)


def test_blocks_are_sealed_and_an_unsealed_memfd_is_never_mapped(pool):
    # A mapping is kept for later transfers: were its file to shrink, touching it would
    # kill the process with SIGBUS. So only blocks sealed against shrinking are mapped.
    shared = pool.lend(np.ones(1 << 16, np.uint8), ME)
    with pytest.raises(OSError):
        os.ftruncate(shared.fd, 0)
    fd = os.memfd_create("dtfnb-block-forged", os.MFD_CLOEXEC)  # dtfnb's name, no seals
    try:
        os.ftruncate(fd, 1 << 16)
        forged = wire_pb2.SharedSlice(owner=2, pid=os.getpid(), fd=fd, block_id=1,
                                      block_size=1 << 16)
        with pytest.raises(InvalidArgumentError, match="not sealed against shrinking"):
            shm.Mappings().view(forged, os.getpid(), np.uint8, (10,), lambda _: None)
    finally:
        os.close(fd)


def test_only_blocks_of_the_process_that_sent_a_slice_are_mapped(peer, pool):
    # The sender is the pid the kernel names for the connection (None: none is named).
    shared = pool.lend(np.ones(1 << 16, np.uint8), ME)
    with pytest.raises(InvalidArgumentError, match="accepted only over the Unix socket"):
        shm.Mappings().view(shared, None, np.uint8, (10,), lambda _: None)
    with pytest.raises(InvalidArgumentError, match=f"A shared block of process {os.getpid()} "
                       f"came from process {peer.proc.pid}: a process may send only its own"):
        shm.Mappings().view(shared, peer.proc.pid, np.uint8, (10,), lambda _: None)


def test_a_slice_larger_than_its_block_is_invalid_argument(pool):
    shared = pool.lend(np.ones(1 << 16, np.uint8), ME)
    shared.block_size = 1 << 30  # what a hostile sender may claim
    with pytest.raises(InvalidArgumentError, match="does not fit shared block"):
        shm.Mappings().view(shared, os.getpid(), np.uint8, (1 << 20,), lambda _: None)


def test_can_map_is_false_for_a_bogus_peer():
    me = shm.local_peer()
    assert shm.can_map(me)

    def bogus(**fields):
        peer = wire_pb2.PeerInfo()
        peer.CopyFrom(me)
        for name, value in fields.items():
            setattr(peer, name, value)
        return peer

    read_end, write_end = os.pipe()
    try:
        assert not shm.can_map(bogus(host_id="another-boot:another-host"))
        assert not shm.can_map(bogus(host_id=""))
        assert not shm.can_map(bogus(instance=me.instance ^ 1))  # a different process
        assert not shm.can_map(bogus(instance=me.instance ^ 2, probe_fd=read_end))  # no block
        assert not shm.can_map(bogus(instance=me.instance ^ 3, pid=2**31 - 1))  # no such pid
    finally:
        os.close(read_end)
        os.close(write_end)


def test_without_shared_memory_nothing_maps_and_lend_returns_none(pool, monkeypatch):
    monkeypatch.setattr(shm, "available", False)
    assert not shm.can_map(shm.local_peer())
    assert pool.lend(np.zeros(1 << 20, np.uint8), ME) is None


def test_the_defaults_are_per_process_and_a_forked_child_is_a_new_peer():
    assert shm.block_pool() is shm.block_pool() and shm.mappings() is shm.mappings()
    me = shm.local_peer()
    assert shm.local_peer() is me
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its identity, never return into pytest
        try:
            os.write(write_end, shm.local_peer().SerializeToString())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as f:
        child = wire_pb2.PeerInfo.FromString(f.read())
    os.waitpid(pid, 0)
    assert child.pid == pid and child.instance != me.instance
    assert child.host_id == me.host_id
