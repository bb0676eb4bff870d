"""The TensorFlow version dtfnb behaves as: code that branches on `tf.__version__` takes
the path it would take on that TensorFlow (`tensorflow.compat.v1` of 2.21). dtfnb's own
version is its package metadata (`importlib.metadata.version("dtfnb")`)."""

VERSION = "2.21.0"
__version__ = VERSION

# The GraphDef versions of that TensorFlow: what it writes, and the oldest it reads.
GRAPH_DEF_VERSION = 2474
GRAPH_DEF_VERSION_MIN_CONSUMER = 0
GRAPH_DEF_VERSION_MIN_PRODUCER = 0
