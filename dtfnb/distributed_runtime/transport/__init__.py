"""How calls and tensors cross task boundaries: a Channel per scheme (channel.py; gRPC in
rpc.py, Unix sockets in unix.py), the framing of messages (wire.py), shared memory on
one host (shm.py), the clients of other tasks (remote.py) and the servicers (services.py).
This is the only package that knows gRPC exists."""

import os

# gRPC's C core logs connection events (a peer's GOAWAY when a task stops) at INFO to
# fd 2, which Jupyter shows in whatever cell runs next. Errors only, unless asked.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

# The backends register their schemes with channel.open_channel as they load.
from dtfnb.distributed_runtime.transport import rpc, unix  # noqa: E402, F401
