"""Runs differential cases on TensorFlow, in TensorFlow's interpreter.

Started by the tier's fixture as `<tf python> tf_worker.py`; reads one JSON request a
line, {"module": ..., "case": ...}, and answers one JSON line with what `observe` saw.
TensorFlow's own chatter goes to stderr so that stdout carries only answers.
"""

import importlib
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# tf.compat.v1.layers exists only with TensorFlow's legacy Keras (the tf-keras package).
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
answers = os.fdopen(os.dup(sys.stdout.fileno()), "w")
os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tensorflow.compat.v1 as tf  # noqa: E402  (after stdout is set aside)
from observe import observe  # noqa: E402

tf.logging.set_verbosity(tf.logging.ERROR)
tf.disable_v2_behavior()
print(json.dumps({"version": tf.__version__}), file=answers, flush=True)
for line in sys.stdin:
    request = json.loads(line)
    case = importlib.import_module(request["module"]).CASES[request["case"]]
    print(json.dumps(observe(case, tf)), file=answers, flush=True)
