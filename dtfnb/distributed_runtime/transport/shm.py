"""Shared memory between tasks (processes) on one host, for large tensors.

The sender copies an array once into a block it owns (a memfd) and sends a
`SharedSlice`; the receiver opens the block as `/proc/<pid>/fd/<fd>`, maps it and
uses the bytes in place, then hands the lease back so the sender can reuse the
block: a fresh block costs page faults (1.5 GB/s), a reused one 7-8 GB/s.
`PeerInfo` and `can_map` tell whether the other end can map our blocks at all
(same host, same pid namespace, permission); where it cannot, or off Linux, the
transport sends the bytes inline. Nothing here knows gRPC.

A peer names a block by pid and fd, so a receiver maps only blocks of the process
that sent the slice, as the kernel names it (SO_PEERCRED on a Unix socket; none
from a sender it does not name): a peer must not make a task read another process's
memory and serve it back, nor plant its block where another's is expected. A peer
could also name a file it still controls: every block is sealed against shrinking
and growing, and a receiver maps only sealed blocks (a mapping over a file that
shrinks would crash it with SIGBUS when touched). $DTFNB_SHARED_MEMORY=0 switches
shared memory off in a process: it then neither offers its blocks nor maps any other's.
"""

import atexit
import collections
import fcntl
import itertools
import math
import mmap
import os
import socket
import threading
import weakref

import numpy as np

from dtfnb.base.errors import InvalidArgumentError
from dtfnb.protos import wire_pb2

# Smaller arrays are cheaper inline than a copy into a block plus a lease round trip.
nbytes_threshold = 64 * 1024

_BOOT_ID = "/proc/sys/kernel/random/boot_id"

available = (hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd")
             and os.path.exists(_BOOT_ID))

SWITCH_VARIABLE = "DTFNB_SHARED_MEMORY"
_SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW if available else 0

_lock = threading.Lock()
_peer = None
_probe = None       # the probe block, open for the process lifetime
_pool = None
_mappings = None
_can_map = {}       # peer instance -> bool; a process keeps its instance for life
_block_ids = itertools.count(1)  # unique in the process, across pools


def enabled():
    """Whether this process lends and maps blocks: Linux, and not switched off."""
    return available and os.environ.get(SWITCH_VARIABLE, "1") != "0"


def local_peer():
    """This process's `PeerInfo` (one shared message: do not modify it). Without shared
    memory it has no probe block, so that no peer sends it any."""
    global _peer, _probe
    with _lock:
        if _peer is None:
            instance = int.from_bytes(os.urandom(8), "little") or 1
            peer = wire_pb2.PeerInfo(instance=instance, pid=os.getpid(), probe_fd=-1)
            if available:
                peer.host_id = _host_id()
            if enabled():
                _probe = _new_block_file("dtfnb-probe", 8, instance.to_bytes(8, "little"))
                peer.probe_fd = _probe.fileno()
            _peer = peer
        return _peer


def _host_id():
    """What tells processes that reach each other's Unix sockets: the boot (one kernel),
    the network namespace (abstract socket names are per network namespace, and every
    namespace shares the boot id) and the hostname."""
    with open(_BOOT_ID) as f:
        boot = f.read().strip()
    try:
        network = os.readlink("/proc/self/ns/net")
    except OSError:   # no namespaces in this kernel: one network
        network = ""
    return f"{boot}:{network}:{socket.gethostname()}"


def can_map(peer):
    """Whether this process can map the blocks of `peer` (a `PeerInfo`); never raises.

    Reading the peer's probe block through /proc proves in one step that the pid
    means the same process here (same pid namespace) and that we may open its fds.
    """
    if not enabled() or peer.host_id != local_peer().host_id:
        return False
    known = _can_map.get(peer.instance)
    if known is None:
        known = _can_map[peer.instance] = _probe_matches(peer)
    return known


def _probe_matches(peer):
    try:
        fd = _open_peer_fd(peer.pid, peer.probe_fd, os.O_RDONLY)
        try:
            # pread fails on pipes and ttys instead of blocking on them.
            return os.pread(fd, 8, 0) == peer.instance.to_bytes(8, "little")
        finally:
            os.close(fd)
    except OSError:
        return False


def _open_peer_fd(pid, fd, flags):
    path = f"/proc/{pid}/fd/{fd}"
    # Only dtfnb's own memfds: a peer must not make this task open (and serve back as a
    # tensor) another file of its own or of any other process, by naming the fd.
    if not os.readlink(path).startswith("/memfd:dtfnb-"):
        raise PermissionError(f"{path} is not a dtfnb shared-memory block")
    # O_NONBLOCK: a bogus fd naming a FIFO must not hang the open.
    opened = os.open(path, flags | os.O_CLOEXEC | os.O_NONBLOCK)
    # The name proves nothing (anyone may name a memfd so); the seals are what make a
    # mapping safe to keep: the file can never shrink under it.
    if fcntl.fcntl(opened, fcntl.F_GET_SEALS) & _SEALS != _SEALS:
        os.close(opened)
        raise PermissionError(f"{path} is not sealed against shrinking: not a dtfnb "
                              "shared-memory block")
    return opened


def _new_block_file(name, size, contents=b""):
    """A memfd of `size` bytes, sealed: its size never changes, and its seals neither."""
    # A file object closes the fd when dropped (a forked child drops its parent's blocks).
    file = os.fdopen(os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING), "r+b",
                     buffering=0)
    file.truncate(size)
    os.pwrite(file.fileno(), contents, 0)
    fcntl.fcntl(file.fileno(), fcntl.F_ADD_SEALS, _SEALS | fcntl.F_SEAL_SEAL)
    return file


class _Block:
    __slots__ = ("id", "file", "mm", "size", "address", "leases", "array", "array_id")

    def __init__(self, size):
        self.id = next(_block_ids)
        self.file = _new_block_file(f"dtfnb-block-{self.id}", size)
        self.mm = mmap.mmap(self.file.fileno(), size)
        self.size = size
        self.address = np.frombuffer(self.mm, np.uint8, 0).ctypes.data
        self.leases = collections.Counter()   # receiver pid -> its leases: who may read it
        self.array = None    # a weak reference to the local array it holds, if any
        self.array_id = None

    def close(self):
        self.mm.close()
        self.file.close()


class BlockPool:
    """The sending side: lends blocks to receivers, and reuses them once given back.

    A receiver is the pid of a process that the kernel named (see Mappings.view), and
    only it ends its own leases: another peer that names the block cannot free it for
    reuse while the receiver still reads it.

    A block holds either a copy of a lent array, or an array made here by `empty` that
    is lent as it is, with no copy: its owner promises never to change it in place (a
    variable's values are such arrays). A block is in use while leased to a receiver
    or while its array lives here. At most `limit_bytes` are in use at a time and the
    whole pool stays within it; free blocks beyond half of it are closed, least
    recently freed first.
    """

    def __init__(self, limit_bytes=4 << 30):
        self.limit_bytes = limit_bytes
        self._lock = threading.Lock()
        self._free = {}     # block_id -> block, least recently freed first
        self._in_use = {}   # block_id -> block
        self._by_array = {}  # id(array made by `empty`) -> its block
        self._free_bytes = 0
        self._used_bytes = 0
        # Blocks whose array died: the garbage collector may find one while this pool
        # holds its lock, so it only appends here (atomic), and the pool takes them in.
        self._dead_arrays = collections.deque()

    def empty(self, shape, dtype):
        """A new uninitialized array in a block of this pool (None: make it elsewhere).
        Lending it costs no copy, so the caller must never change it in place once lent."""
        dtype = np.dtype(dtype)
        nbytes = math.prod(shape) * dtype.itemsize
        if not enabled() or nbytes < nbytes_threshold:
            return None
        with self._lock:
            block = self._use(self._page_multiple(nbytes))
            if block is None:
                return None
            array = np.ndarray(shape, dtype, buffer=block.mm)
            block.array, block.array_id = weakref.ref(array), id(array)
            self._by_array[block.array_id] = block
        # Views of `array` keep it alive (numpy sets their .base to it).
        weakref.finalize(array, self._dead_arrays.append, block.id).atexit = False
        return array

    def lend(self, array, receiver):
        """The `SharedSlice` of a block holding `array` (any layout, as C order), leased to
        the process `receiver` (a pid): the block is `array`'s own if `empty` made it, else
        a copy. None when shared memory is unavailable or over the limit: send inline
        then."""
        if not enabled():
            return None
        array = np.asarray(array)
        block = self._holding(array, receiver)
        if block is None:
            with self._lock:
                block = self._use(self._page_multiple(array.nbytes))
                if block is None:
                    return None
                block.leases[receiver] = 1
            try:  # the copy runs outside the lock: other threads lend meanwhile
                np.ndarray(array.shape, array.dtype, buffer=block.mm)[...] = array
            except BaseException:
                self.give_back(receiver, [block.id])
                raise
        peer = local_peer()
        return wire_pb2.SharedSlice(owner=peer.instance, pid=peer.pid, fd=block.file.fileno(),
                                    block_id=block.id, block_size=block.size,
                                    read_only=block.array is not None)

    def _holding(self, array, receiver):
        """The block of an array `empty` made (a C-ordered view of all of it counts),
        with one more lease of `receiver`; None for any other array."""
        root = array.base if isinstance(array.base, np.ndarray) else array
        with self._lock:
            block = self._by_array.get(id(root))
            if (block is None or block.array is None or block.array() is not root
                    or not array.flags.c_contiguous or array.ctypes.data != block.address):
                return None
            block.leases[receiver] += 1
            return block

    def give_back(self, receiver, block_ids):
        """Ends one lease of `receiver` (a pid, or None: no process) on each block; ids of
        blocks it holds no lease on are ignored."""
        with self._lock:
            for block_id in block_ids:
                block = self._in_use.get(block_id)
                if block is not None and block.leases[receiver]:
                    block.leases[receiver] -= 1
                    if not block.leases[receiver]:
                        del block.leases[receiver]
                    self._free_if_unused(block)
            self._trim(self.limit_bytes // 2)

    def close(self):
        """Closes every block, except those a live array still uses (a forked child's)."""
        with self._lock:
            for block in [*self._free.values(), *self._in_use.values()]:
                try:
                    block.close()
                except BufferError:  # an array over it lives on; so does the mapping
                    pass
            self._free.clear()
            self._in_use.clear()
            self._by_array.clear()
            self._free_bytes = self._used_bytes = 0

    @staticmethod
    def _page_multiple(nbytes):
        return -(-max(nbytes, 1) // mmap.PAGESIZE) * mmap.PAGESIZE

    def _use(self, need):
        """A free or new block of at least `need` bytes, now in use; None over the limit."""
        while self._dead_arrays:
            block = self._in_use.get(self._dead_arrays.popleft())
            if block is not None:
                if self._by_array.get(block.array_id) is block:
                    del self._by_array[block.array_id]
                block.array = block.array_id = None
                self._free_if_unused(block)
        block = self._take_free(need) or self._create(need)
        if block is not None:
            self._in_use[block.id] = block
            self._used_bytes += block.size
        return block

    def _free_if_unused(self, block):
        if not block.leases and block.array is None:
            del self._in_use[block.id]
            self._used_bytes -= block.size
            self._free[block.id] = block
            self._free_bytes += block.size

    def _take_free(self, need):
        # At most twice the need, so a small array does not pin a huge block.
        fits = [b for b in self._free.values() if need <= b.size <= 2 * need]
        if not fits:
            return None
        block = min(fits, key=lambda b: b.size)
        del self._free[block.id]
        self._free_bytes -= block.size
        return block

    def _create(self, size):
        if self._used_bytes + size > self.limit_bytes:
            return None
        self._trim(self.limit_bytes - self._used_bytes - size)
        try:
            return _Block(size)
        except OSError:  # out of fds or memory: the caller sends inline
            return None

    def _trim(self, budget):
        for block in list(self._free.values()):
            if self._free_bytes <= budget:
                break
            del self._free[block.id]
            self._free_bytes -= block.size
            block.close()


class Mappings:
    """The receiving side: zero-copy arrays over other processes' blocks.

    Mappings are cached per block for later transfers, keyed by the verified pid of
    its owner, and the owner's instance (a pid may come back as another process);
    beyond `limit_bytes`, those no array uses any more are closed, least recently
    used first.
    """

    def __init__(self, limit_bytes=4 << 30):
        self.limit_bytes = limit_bytes
        self._lock = threading.Lock()
        self._maps = {}     # (pid, owner, block_id) -> mmap, least recently used first
        self._bytes = 0

    def view(self, shared, sender, dtype, shape, on_release):
        """A writable array over the start of the block of `shared` (a `SharedSlice`),
        which the process `sender` sent: its pid from the kernel, None if unknown.

        `on_release(block_id)` runs once when no array made by this call is alive;
        it may run in any thread, from the garbage collector: keep it cheap. A slice
        that names no block of `sender`, or that does not fit its block, is the sender's
        error: InvalidArgumentError (never retried, as unavailable would be).
        """
        if not enabled():
            raise InvalidArgumentError(None, None, "Shared memory is switched off in this "
                                       f"process (${SWITCH_VARIABLE}=0): send tensors inline")
        if sender is None:
            raise InvalidArgumentError(None, None, "Shared memory is accepted only over the "
                                       "Unix socket of a task on this host: send tensors "
                                       "inline")
        if shared.pid != sender:
            raise InvalidArgumentError(None, None, f"A shared block of process {shared.pid} "
                                       f"came from process {sender}: a process may send "
                                       "only its own blocks")
        dtype = np.dtype(dtype)
        nbytes = math.prod(shape) * dtype.itemsize
        key = (sender, shared.owner, shared.block_id)
        with self._lock:
            mm = self._maps.pop(key, None)  # popped and put back: now the most recent
            if mm is None:
                mm = self._map(shared)
            self._maps[key] = mm
            if nbytes > len(mm):
                raise InvalidArgumentError(None, None, f"A tensor of {nbytes} bytes does not "
                                           f"fit shared block {shared.block_id} of "
                                           f"{len(mm)} bytes")
            # Made under the lock, so a concurrent trim cannot close `mm` first; while
            # `base` lives, `mm.close()` raises BufferError, so trims skip it.
            base = np.frombuffer(mm, np.uint8, nbytes)
            self._trim()
        # Views of `base` keep it alive (numpy sets their .base to it), so this fires
        # once every array made here is gone. Not at exit: the peer may be gone too.
        weakref.finalize(base, on_release, shared.block_id).atexit = False
        return base.view(dtype).reshape(shape)

    def _map(self, shared):
        try:
            fd = _open_peer_fd(shared.pid, shared.fd, os.O_RDWR)
            try:
                mm = mmap.mmap(fd, 0)  # the mapping holds the block; the fd is not needed
            finally:
                os.close(fd)
        except (OSError, ValueError) as e:
            raise InvalidArgumentError(
                None, None,
                f"cannot map shared block fd {shared.fd} of process {shared.pid} "
                f"(/proc/{shared.pid}/fd/{shared.fd}): {e}") from None
        self._bytes += len(mm)
        return mm

    def _trim(self):
        for key, mm in list(self._maps.items()):
            if self._bytes <= self.limit_bytes:
                break
            size = len(mm)
            try:
                mm.close()
            except BufferError:  # arrays still use it
                continue
            del self._maps[key]
            self._bytes -= size


def block_pool():
    """The process-wide `BlockPool`."""
    global _pool
    with _lock:
        if _pool is None:
            _pool = BlockPool()
        return _pool


def mappings():
    """The process-wide `Mappings`."""
    global _mappings
    with _lock:
        if _mappings is None:
            _mappings = Mappings()
        return _mappings


def _after_fork_in_child():
    # A child is a new peer, and the parent's blocks are not its own to lend: lending
    # one would write into memory the parent shares. Locks held by other threads at
    # the fork stay held in the child, hence fresh ones.
    global _lock, _peer, _probe, _pool, _mappings
    probe, pool = _probe, _pool
    _lock = threading.Lock()
    _peer = _probe = _pool = _mappings = None
    if probe is not None:
        probe.close()
    if pool is not None:
        pool._lock = threading.Lock()
        pool.close()


def _close_at_exit():
    # The blocks live as long as the process; closing them at exit keeps Python's
    # ResourceWarning quiet. Mapped blocks stay valid for peers that still use them.
    with _lock:
        probe, pool = _probe, _pool
    if probe is not None:
        probe.close()
    if pool is not None:
        pool.close()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(_close_at_exit)
