"""TensorFlow's error classes; each code equals the gRPC status code of the same name."""

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """A failure while running a graph: carries the failing node and a status code.

    Below the GraphDef line only `node_name` is known; the client attaches the
    Python `op` (and its `node_def`) before the error reaches the user.
    """

    error_code = UNKNOWN

    def __init__(self, node_def, op, message, error_code=None):
        super().__init__(message)
        self._node_def = node_def
        self._op = op
        self._message = message
        if error_code is not None:
            self.error_code = error_code
        self.node_name = getattr(node_def, "name", None) or getattr(op, "name", None)

    @property
    def message(self):
        """The error message that describes the error."""
        return self._message

    @property
    def op(self):
        """The operation that failed, if known (None for an error not raised by an op)."""
        return self._op

    @property
    def node_def(self):
        """The `NodeDef` proto of the failing op, if known."""
        return self._node_def

    def __str__(self):
        return self._message

    def __reduce__(self):
        return type(self), (self._node_def, self._op, self._message)


def _error_class(name, code, doc):
    def init(self, node_def, op, message, *args):
        OpError.__init__(self, node_def, op, message, code)

    return type(name, (OpError,), {"__init__": init, "error_code": code, "__doc__": doc})


CancelledError = _error_class("CancelledError", CANCELLED, "An operation or step was cancelled.")
UnknownError = _error_class("UnknownError", UNKNOWN, "An unknown error.")
InvalidArgumentError = _error_class(
    "InvalidArgumentError", INVALID_ARGUMENT, "An operation received an invalid argument.")
DeadlineExceededError = _error_class(
    "DeadlineExceededError", DEADLINE_EXCEEDED, "A deadline expired before the operation finished.")
NotFoundError = _error_class("NotFoundError", NOT_FOUND, "A requested entity was not found.")
AlreadyExistsError = _error_class(
    "AlreadyExistsError", ALREADY_EXISTS, "An entity that we tried to create already exists.")
PermissionDeniedError = _error_class(
    "PermissionDeniedError", PERMISSION_DENIED, "The caller may not run the operation.")
ResourceExhaustedError = _error_class(
    "ResourceExhaustedError", RESOURCE_EXHAUSTED, "Some resource has been exhausted.")
FailedPreconditionError = _error_class(
    "FailedPreconditionError", FAILED_PRECONDITION,
    "The system is not in a state to run the operation (e.g. an uninitialized variable).")
AbortedError = _error_class("AbortedError", ABORTED, "The operation was aborted.")
OutOfRangeError = _error_class(
    "OutOfRangeError", OUT_OF_RANGE, "An operation ran past the valid range (e.g. end of a queue).")
UnimplementedError = _error_class(
    "UnimplementedError", UNIMPLEMENTED, "The operation is not implemented or supported.")
InternalError = _error_class("InternalError", INTERNAL, "An internal invariant was broken.")
UnavailableError = _error_class("UnavailableError", UNAVAILABLE, "The runtime is unavailable.")
DataLossError = _error_class("DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption.")
UnauthenticatedError = _error_class(
    "UnauthenticatedError", UNAUTHENTICATED, "The request lacks valid authentication.")



class InaccessibleTensorError(ValueError):
    """A fetch of a tensor made inside a cond branch or a loop body, which only exists
    while its branch or iteration runs."""


_CLASS_BY_CODE = {cls.error_code: cls for cls in (
    CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError, NotFoundError,
    AlreadyExistsError, PermissionDeniedError, ResourceExhaustedError, FailedPreconditionError,
    AbortedError, OutOfRangeError, UnimplementedError, InternalError, UnavailableError,
    DataLossError, UnauthenticatedError)}


def exception_type_from_error_code(error_code):
    """The OpError subclass for a `tf.errors` code (e.g. OUT_OF_RANGE gives OutOfRangeError)."""
    return _CLASS_BY_CODE[error_code]


def error_code_from_exception_type(cls):
    """The `tf.errors` code of an OpError subclass."""
    return cls.error_code


def from_code(error_code, message, node_name=None):
    """Builds the error for a status that came from the runtime or over the wire."""
    err = _CLASS_BY_CODE.get(error_code, UnknownError)(None, None, message)
    err.node_name = node_name
    return err


class OperatorNotAllowedInGraphError(TypeError):
    """A Python operation a graph cannot answer, such as iterating over a tensor."""
