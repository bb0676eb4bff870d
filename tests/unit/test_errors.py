"""tf.errors: classes and codes, and the errors runs raise (with the failing op attached)."""

import pytest

import dtfnb as tf
from dtfnb.distributed_runtime.targets import connect

CODES = [
    ("CancelledError", "CANCELLED", 1), ("UnknownError", "UNKNOWN", 2),
    ("InvalidArgumentError", "INVALID_ARGUMENT", 3),
    ("DeadlineExceededError", "DEADLINE_EXCEEDED", 4), ("NotFoundError", "NOT_FOUND", 5),
    ("AlreadyExistsError", "ALREADY_EXISTS", 6),
    ("PermissionDeniedError", "PERMISSION_DENIED", 7),
    ("ResourceExhaustedError", "RESOURCE_EXHAUSTED", 8),
    ("FailedPreconditionError", "FAILED_PRECONDITION", 9), ("AbortedError", "ABORTED", 10),
    ("OutOfRangeError", "OUT_OF_RANGE", 11), ("UnimplementedError", "UNIMPLEMENTED", 12),
    ("InternalError", "INTERNAL", 13), ("UnavailableError", "UNAVAILABLE", 14),
    ("DataLossError", "DATA_LOSS", 15), ("UnauthenticatedError", "UNAUTHENTICATED", 16),
]


@pytest.mark.parametrize("class_name, code_name, code", CODES)
def test_error_classes_and_codes(class_name, code_name, code):
    cls = getattr(tf.errors, class_name)
    assert issubclass(cls, tf.errors.OpError)
    assert getattr(tf.errors, code_name) == code
    err = cls(None, None, "what happened")
    assert err.error_code == code
    assert err.message == "what happened"
    assert str(err) == "what happened"
    assert err.op is None and err.node_def is None
    assert tf.errors.exception_type_from_error_code(code) is cls
    assert tf.errors.error_code_from_exception_type(cls) == code


def test_op_error_carries_node_def_op_message_and_code():
    assert tf.errors.OK == 0
    op = tf.constant(1.0, name="c").op
    err = tf.errors.OpError(op.node_def, op, "boom", tf.errors.ABORTED)
    assert (err.node_def.name, err.op, err.message, err.error_code) == ("c", op, "boom", 10)
    assert isinstance(err, Exception)
    with pytest.raises(tf.errors.OpError):
        raise tf.errors.NotFoundError(None, None, "missing")


def test_uninitialized_variable_names_the_reading_op():
    x = tf.Variable(1.0, name="x")
    y = tf.identity(x, name="y")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError) as info:
            sess.run(y)
        err = info.value
        assert err.message.startswith("Attempting to use uninitialized value x")
        assert err.error_code == 9
        assert err.op is x.value().op
        assert err.op.name == "x/read"
        assert err.node_def.name == "x/read"
        assert "x/read" in str(err)
        sess.run(x.initializer)
        assert sess.run(y) == 1.0


def test_fetching_an_uninitialized_variable_directly():
    x = tf.Variable(1.0, name="x")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match="Attempting to use uninitialized value x"):
            sess.run(x)


def test_malformed_device_in_an_imported_graph_def_fails_at_run_time():
    tf.constant(1.0, name="c")
    graph_def = tf.get_default_graph().as_graph_def()
    graph_def.node[0].device = "/foo:bar"
    with tf.Graph().as_default() as g:
        (c,) = tf.import_graph_def(graph_def, return_elements=["c:0"])
        assert c.device == "/foo:bar"  # kept as written
        with tf.Session(graph=g) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="/foo:bar"):
                sess.run(c)


def test_malformed_device_string_fails_at_build_time():
    with pytest.raises(ValueError):
        with tf.device("/foo:bar"):
            tf.constant(1.0)


def _cyclic_graph_def():
    tf.no_op(name="a")
    tf.no_op(name="b")
    graph_def = tf.get_default_graph().as_graph_def()
    graph_def.node[0].input.append("^b")
    graph_def.node[1].input.append("^a")
    return graph_def


def test_cycle_sent_to_a_master_is_an_invalid_argument_error_naming_a_node():
    graph_def = _cyclic_graph_def()
    config = tf.ConfigProto()
    master, _ = connect("", config)
    try:
        handle = master.create_session(graph_def, config)
        with pytest.raises(tf.errors.InvalidArgumentError, match="cycle.*'(a|b)'"):
            master.run_step(handle, {}, [], ["a"])
        master.close_session(handle)
    finally:
        master.close()


def test_imported_cycle_is_rejected_at_import():
    graph_def = _cyclic_graph_def()
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="cycle"):
            tf.import_graph_def(graph_def)


def test_unknown_target_and_fetch_names_at_the_master():
    tf.constant(1.0, name="c")
    graph_def = tf.get_default_graph().as_graph_def()
    config = tf.ConfigProto()
    master, _ = connect("", config)
    try:
        handle = master.create_session(graph_def, config)
        with pytest.raises(tf.errors.InvalidArgumentError, match="not found"):
            master.run_step(handle, {}, ["zzz:0"], [])
        with pytest.raises(tf.errors.InvalidArgumentError, match="not found"):
            master.run_step(handle, {}, [], ["zzz"])
        assert master.run_step(handle, {}, ["c:0"], []) == [1.0]
        master.close_session(handle)
        with pytest.raises(tf.errors.AbortedError):
            master.run_step(handle, {}, ["c:0"], [])
    finally:
        master.close()


def test_first_error_aborts_the_step_and_the_session_stays_usable():
    p = tf.placeholder(tf.float32, name="p")
    x = tf.Variable(1.0, name="x")
    both = [tf.identity(p, name="needs_feed"), tf.identity(x, name="needs_init")]
    with tf.Session() as sess:
        with pytest.raises((tf.errors.InvalidArgumentError, tf.errors.FailedPreconditionError)):
            sess.run(both)
        sess.run(x.initializer)
        assert sess.run(both, {p: 2.0}) == [2.0, 1.0]
