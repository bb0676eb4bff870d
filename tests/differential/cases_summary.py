"""tf.summary's ops: the graphs they build (names, tags, types, attrs, collections), the
Summary each one's run serializes (`summary_values`: histograms to the bit, images as
decoded pixels, audio as WAV header and samples, tensors as their protos), and errors.

Values that a kernel must check come from placeholders, so that no graph rewrite of
TensorFlow's can compute them before the run."""

import numpy as np
from observe import node_defs, outcome, run, summary_values

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def _summarized(tf, summary, feed_dict=None):
    """The summary op's graph and collections, and what its run serialized."""
    graph = tf.get_default_graph()
    return (node_defs(graph), [t.name for t in tf.get_collection(tf.GraphKeys.SUMMARIES)],
            summary_values(tf, run(tf, summary, feed_dict)))


def _fed(tf, summarize, values):
    """summarize(placeholder) run with `values` fed, or the error the run raised."""
    values = np.asarray(values)
    x = tf.placeholder(tf.as_dtype(values.dtype), values.shape, name="x")
    summary = summarize(x)
    return outcome(lambda: summary_values(tf, run(tf, summary, {x: values})))


_RANDOM = np.random.RandomState(7)

# -- scalar ------------------------------------------------------------------------------


@case
def scalar_graph(tf):
    with tf.name_scope("outer"):
        loss = tf.summary.scalar("loss", tf.constant(2.5))
    tf.summary.scalar("accuracy 1:", tf.constant(3, tf.int64), family="eval")
    tf.summary.scalar("loss", 4, collections=["mine"])
    return _summarized(tf, loss), [t.name for t in tf.get_collection("mine")]


@case
def scalar_not_a_scalar(tf):
    return _fed(tf, lambda x: tf.summary.scalar("s", x), [1.0, 2.0])


@case
def scalar_of_strings(tf):
    return outcome(tf.summary.scalar, "s", tf.constant("a"))


# -- histogram ---------------------------------------------------------------------------

_HISTOGRAM_VALUES = {
    "few": np.array([[1.0, 2.0], [3.0, -4.0]], np.float32),
    "zeros_and_repeats": np.array([0.0, 0.0, -0.0, 1e-13, 5.0, 5.0, 5.0, -1e-13], np.float64),
    "normal": _RANDOM.normal(3.0, 10.0, 1000).astype(np.float32),
    "wide": np.array([1e-15, 1e-12, 1.1e-12, 1e19, 1e21, -1e30, 1e300], np.float64),
    "int32": np.array([3, -7, 0, 12, 12], np.int32),
    "uint8": np.array([0, 255, 3], np.uint8),
    "int64": np.array([2 ** 40, -(2 ** 53) - 1], np.int64),
    "float16": np.array([0.1, 65504.0, -3.0], np.float16),
    "empty": np.zeros([0, 3], np.float32),
    "nan": np.array([1.0, np.nan, np.inf], np.float32),
    "inf": np.array([1.0, -np.inf, np.nan], np.float64),
}


def _histogram_case(values):
    return lambda tf: _fed(tf, lambda x: tf.summary.histogram("h", x), values)


for _name, _values in _HISTOGRAM_VALUES.items():
    CASES[f"histogram_{_name}"] = _histogram_case(_values)


@case
def histogram_graph(tf):
    with tf.name_scope("layer"):
        weights = tf.summary.histogram("weights", tf.constant([1.0, 2.0]))
    tf.summary.histogram("biases", [1, 2], family="params", collections=["mine", "other"])
    tf.summary.histogram(None, tf.constant([1.0]))
    return (_summarized(tf, weights), [t.name for t in tf.get_collection("mine")],
            [t.name for t in tf.get_collection("other")])


@case
def histogram_of_strings(tf):
    return outcome(tf.summary.histogram, "h", tf.constant(["a"]))


# -- image -------------------------------------------------------------------------------

_PIXELS = _RANDOM.uniform(0.0, 1.0, [3, 4, 5, 4])
_IMAGES = {
    "uint8_rgb": (_RANDOM.randint(0, 256, [2, 3, 4, 3]).astype(np.uint8), 3),
    "uint8_gray_one": (_RANDOM.randint(0, 256, [3, 2, 2, 1]).astype(np.uint8), 1),
    "float_unit": (_PIXELS[..., :3].astype(np.float32), 3),
    "float_signed": ((_PIXELS - 0.4).astype(np.float32), 2),
    "float_large": ((_PIXELS * 1000).astype(np.float32), 3),
    "float_all_zero": (np.zeros([1, 2, 3, 1], np.float32), 3),
    "float_tiny": (np.full([1, 2, 2, 1], 1e-7, np.float32), 3),
    "float_nonfinite_rgba": (np.where(_PIXELS > 0.8, np.nan, _PIXELS).astype(np.float32), 3),
    "float_nonfinite_rgb": (np.where(_PIXELS[..., :3] < 0.1, -np.inf,
                                     _PIXELS[..., :3] - 0.5).astype(np.float32), 3),
    "float_nonfinite_gray": (np.where(_PIXELS[..., :1] > 0.5, np.inf,
                                      _PIXELS[..., :1]).astype(np.float32), 3),
    "float_all_nonfinite": (np.full([1, 2, 2, 3], np.nan, np.float32), 3),
    "float64": ((_PIXELS[..., :3] * 3 - 1).astype(np.float64), 3),
    "float16": ((_PIXELS[..., :1] * 2 - 1).astype(np.float16), 3),
    "batch_empty": (np.zeros([0, 2, 2, 3], np.float32), 3),
    "two_channels": (np.zeros([1, 2, 2, 2], np.uint8), 3),
    "rank_3": (np.zeros([2, 2, 3], np.float32), 3),
    "no_pixels": (np.zeros([1, 0, 2, 3], np.float32), 3),
}


def _image_case(images, max_outputs):
    return lambda tf: _fed(tf, lambda x: tf.summary.image("img", x, max_outputs), images)


for _name, (_images, _max_outputs) in _IMAGES.items():
    CASES[f"image_{_name}"] = _image_case(_images, _max_outputs)


@case
def image_graph(tf):
    images = tf.summary.image("input", tf.zeros([1, 2, 2, 3]), max_outputs=1, family="data")
    bad_color = images.op.get_attr("bad_color")  # TensorFlow's proto has int_val, dtfnb's not
    return (_summarized(tf, images), bad_color.dtype,
            [d.size for d in bad_color.tensor_shape.dim],
            list(getattr(bad_color, "int_val", ())) or list(bad_color.tensor_content))


@case
def image_of_ints(tf):
    return outcome(tf.summary.image, "img", tf.zeros([1, 2, 2, 3], tf.int32))


# -- audio -------------------------------------------------------------------------------

_SOUND = np.sin(np.arange(40) / 3.0).astype(np.float32)
_AUDIO = {
    "mono": (_SOUND.reshape(2, 20), 8000.0, 3),
    "stereo_one": (_SOUND.reshape(2, 10, 2), 16000.0, 1),
    "clipped": (np.array([[2.0, -2.0, 1.0, -1.0, np.inf, -np.inf, np.nan]], np.float32),
                100.0, 3),
    "rounding": (np.array([[0.5, 1.5, 2.5, -0.5, -2.5, 32766.5]], np.float32) / 32768,
                 100.0, 3),
    "half_hertz": (np.zeros([1, 3], np.float32), 0.5, 3),
    "fractional_rate": (np.zeros([1, 3], np.float32), 22050.5, 3),
    "zero_rate": (np.zeros([1, 3], np.float32), 0.0, 3),
    "batch_empty": (np.zeros([0, 4], np.float32), 100.0, 2),
    "rank_1": (np.zeros([4], np.float32), 100.0, 3),
    "rank_4": (np.zeros([1, 4, 1, 1], np.float32), 100.0, 3),
}


def _audio_case(sound, sample_rate, max_outputs):
    def run_case(tf):
        rate = tf.placeholder(tf.float32, [], name="rate")
        x = tf.placeholder(tf.float32, sound.shape, name="x")
        summary = tf.summary.audio("sound", x, rate, max_outputs)
        return outcome(lambda: summary_values(tf, run(tf, summary, {x: sound,
                                                                     rate: sample_rate})))
    return run_case


for _name, (_sound, _rate, _max_outputs) in _AUDIO.items():
    CASES[f"audio_{_name}"] = _audio_case(_sound, _rate, _max_outputs)


@case
def audio_graph(tf):
    with tf.name_scope("speech"):
        sound = tf.summary.audio("voice", tf.zeros([2, 5]), 44100, family="talk")
    return _summarized(tf, sound)


@case
def audio_of_doubles(tf):
    return outcome(tf.summary.audio, "a", tf.zeros([1, 4], tf.float64), 100)


# -- text and tensor summaries ----------------------------------------------------------


@case
def text_graph(tf):
    notes = tf.summary.text("notes", tf.constant([["a", "**b**"], ["c", ""]]))
    tf.summary.text("title", tf.constant("one line"), collections=["mine"])
    return _summarized(tf, notes), [t.name for t in tf.get_collection("mine")]


@case
def text_of_floats(tf):
    return outcome(tf.summary.text, "t", tf.constant([1.0]))


@case
def tensor_summary_graph(tf):
    with tf.name_scope("stats"):
        summary = tf.summary.tensor_summary(
            "matrix", tf.constant([[1.5, 2.0], [3.0, 4.0]]),
            summary_description="the **weights**", display_name="Weights", family="fam")
    return _summarized(tf, summary)


@case
def tensor_summary_kinds(tf):
    metadata = tf.SummaryMetadata(
        plugin_data=tf.SummaryMetadata.PluginData(plugin_name="custom", content=b"\x01\x02"))
    summaries = [tf.summary.tensor_summary("ints", tf.constant([1, 2, 3], tf.int64)),
                 tf.summary.tensor_summary("flag", tf.constant(True), summary_metadata=metadata),
                 tf.summary.tensor_summary("word", tf.constant(b"\xff\x00")),
                 tf.summary.tensor_summary("none", tf.zeros([0, 2], tf.int32))]
    return [summary_values(tf, value) for value in run(tf, summaries)]


# -- merge, merge_all, descriptions -----------------------------------------------------


@case
def merge_graph(tf):
    a = tf.summary.scalar("a", tf.constant(1.0))
    h = tf.summary.histogram("h", tf.constant([1.0]))
    merged = tf.summary.merge([a, h])
    named = tf.summary.merge([h, a], collections=["merged"], name="my merge")
    return (_summarized(tf, merged), named.name, summary_values(tf, run(tf, named)),
            [t.name for t in tf.get_collection("merged")])


@case
def merge_duplicate_tag(tf):
    a = tf.summary.scalar("a", tf.constant(1.0))
    return outcome(run, tf, tf.summary.merge([a, tf.summary.histogram("h", [1]), a]))


@case
def merge_garbage(tf):
    garbage = tf.placeholder(tf.string, [2], name="garbage")
    merged = tf.summary.merge([tf.summary.scalar("a", 1.0), garbage])
    return outcome(run, tf, merged, {garbage: [b"", b"\xff"]})


@case
def merge_empty_tags(tf):
    a = tf.summary.tensor_summary("a", tf.constant(1))
    empty = tf.placeholder(tf.string, [], name="empty")
    merged = tf.summary.merge([a, empty, empty])
    untagged = b"\n\x04B\x02\x08\x03"  # one Value with no tag, holding a DT_INT32 tensor
    return summary_values(tf, run(tf, merged, {empty: untagged}))


@case
def merge_all_graph(tf):
    nothing = tf.summary.merge_all()
    with tf.name_scope("train"):
        tf.summary.scalar("loss", tf.constant(1.0))
        tf.summary.histogram("w", tf.constant([1.0]))
    with tf.name_scope("eval"):
        tf.summary.scalar("loss", tf.constant(2.0))
    tf.summary.scalar("lr", tf.constant(0.1), collections=["hyper"])
    merged = tf.summary.merge_all()
    train = tf.summary.merge_all(scope="train", name="train_summaries")
    hyper = tf.summary.merge_all(key="hyper")
    return (nothing, merged.name, train.name, hyper.name, _summarized(tf, merged),
            summary_values(tf, run(tf, train)), summary_values(tf, run(tf, hyper)),
            tf.summary.merge_all(key="absent"), tf.summary.merge_all(scope="none"))


@case
def summary_description(tf):
    node = tf.NodeDef(name="t", op="TensorSummary")
    node.attr["description"].s = b'{"type_hint": "image"}'
    text = tf.summary.text("t", tf.constant("x"))
    return (tf.summary.get_summary_description(node).type_hint,
            outcome(tf.summary.get_summary_description, text.op.node_def),
            tf.summary.SummaryDescription(type_hint="x").SerializeToString())
