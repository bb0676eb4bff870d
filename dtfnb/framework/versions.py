"""The TensorFlow version dtfnb behaves as: code that branches on `tf.__version__` takes
the path it would take on that TensorFlow (`tensorflow.compat.v1` of 2.21). dtfnb's own
version is its package metadata (`importlib.metadata.version("dtfnb")`)."""

VERSION = "2.21.0"
__version__ = VERSION
