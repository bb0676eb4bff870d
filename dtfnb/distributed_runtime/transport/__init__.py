"""How a session reaches its master and a master its workers: in process, or over gRPC."""

import os

# gRPC's C core logs connection events (a peer's GOAWAY when a task stops) at INFO to
# fd 2, which Jupyter shows in whatever cell runs next. Errors only, unless asked.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
