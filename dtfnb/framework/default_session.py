"""The per-thread stack of default sessions behind `Tensor.eval()` and `Operation.run()`."""

import threading

_local = threading.local()


def _stack():
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


def push(session):
    """Makes `session` the default session of this thread (Session.as_default enters)."""
    _stack().append(session)


def pop(session):
    """Drops `session` from the top of this thread's default-session stack."""
    stack = _stack()
    if stack and stack[-1] is session:
        stack.pop()


def get_default_session():
    """Returns the default session for the current thread, or None."""
    stack = _stack()
    return stack[-1] if stack else None


def run_in_session(fetch, feed_dict, session):
    """What `Tensor.eval()` and `Operation.run()` do: run `fetch` in `session`, else in the
    default one, raising TensorFlow's ValueError when there is none or it has another
    graph.
    """
    is_tensor = hasattr(fetch, "value_index")
    what = "evaluate tensor using `eval()`" if is_tensor else "execute operation using `run()`"
    session = session or get_default_session()
    if session is None:
        raise ValueError(
            f"Cannot {what}: No default session is registered. Use `with sess.as_default()` "
            f"or pass an explicit session to `{'eval' if is_tensor else 'run'}(session=sess)`")
    if session.graph is not fetch.graph:
        kind = "tensor" if is_tensor else "operation"
        raise ValueError(f"Cannot use the given session to {what.split(' using')[0]}: the "
                         f"{kind}'s graph is different from the session's graph.")
    return session.run(fetch, feed_dict)
