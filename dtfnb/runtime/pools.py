"""A session's inter-op thread pools (ConfigProto.session_inter_op_thread_pool).

A step runs the ops its executors hand to an inter-op pool on the one its
RunOptions.inter_op_thread_pool chose (Step.inter_op_pool): a pool of the session, the
caller's thread (CALLER_THREAD, index -1), or, when the session names no pools, each
device's own (None).
"""

import threading
import weakref
from concurrent.futures import ThreadPoolExecutor

from dtfnb.base.cores import usable_cores
from dtfnb.base.errors import InvalidArgumentError

# Step.inter_op_pool for RunOptions.inter_op_thread_pool = -1: ops run on the threads
# that run the step (blocking ones still wait on threads of their own).
CALLER_THREAD = "caller thread"

# Pools of the process by global_name, while a session holds them (TensorFlow keeps them
# for good, which no session could tell apart). As in TensorFlow's Python sessions, a
# session that asks for another size gets the pool there is, with no error (its
# DirectSession reports that only from Create, which they never call).
_global_pools = weakref.WeakValueDictionary()
_global_lock = threading.Lock()


def session_pools(config):
    """The pools of a local session's ConfigProto, in order (a session owns the unnamed
    ones: their threads end once it and its steps are gone); (None,) when it names none."""
    if not config.session_inter_op_thread_pool:
        return (None,)
    default_size = config.inter_op_parallelism_threads or usable_cores()
    pools = []
    for index, options in enumerate(config.session_inter_op_thread_pool):
        if options.num_threads < 0:
            raise InvalidArgumentError(None, None, "ThreadPoolOptionProto.num_threads must "
                                       f"be at least 0, got {options.num_threads}")
        size = options.num_threads or default_size
        if not options.global_name:
            pools.append(ThreadPoolExecutor(size, thread_name_prefix=f"dtfnb-compute{index}"))
            continue
        with _global_lock:
            pool = _global_pools.get(options.global_name)
            if pool is None:
                pool = _global_pools[options.global_name] = ThreadPoolExecutor(
                    size, thread_name_prefix=f"dtfnb-{options.global_name}")
        pools.append(pool)
    return tuple(pools)
