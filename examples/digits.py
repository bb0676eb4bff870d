"""The data and the model every example trains: digits (8x8 images, 10 classes), a small MLP.

scikit-learn's digits when it is installed; otherwise a synthetic stand-in of the
same shape (noisy class prototypes), so that the examples run anywhere.
"""

import collections

import numpy as np

N_INPUTS, N_HIDDEN, N_OUTPUTS = 64, 64, 10

Digits = collections.namedtuple("Digits", "X_train y_train X_test y_test source")


def load_digits(seed=42, test_fraction=0.2):
    """The data set shuffled with `seed` and split; `source` says where it came from."""
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError:
        X, y = _synthetic_digits(seed)
        source = "synthetic"
    else:
        X, y = sklearn_digits(return_X_y=True)
        X = X / 16.0  # pixel intensities 0..16
        source = "sklearn"
    order = np.random.default_rng(seed).permutation(len(X))
    X, y = X[order].astype(np.float32), y[order].astype(np.int64)
    n_test = int(len(X) * test_fraction)
    return Digits(X[n_test:], y[n_test:], X[:n_test], y[:n_test], source)


def _synthetic_digits(seed, n=1797):
    rng = np.random.default_rng(seed)
    prototypes = (rng.uniform(size=(N_OUTPUTS, N_INPUTS)) > 0.6).astype(np.float32)
    y = rng.integers(0, N_OUTPUTS, n)
    X = prototypes[y] + rng.normal(0.0, 1.0, (n, N_INPUTS))
    return np.clip(X, 0.0, 1.0), y


def batches(X, y, batch_size, seed=0):
    """Endless random mini-batches."""
    rng = np.random.default_rng(seed)
    while True:
        index = rng.integers(0, len(X), batch_size)
        yield X[index], y[index]


def model_params(tf, n_hidden=N_HIDDEN, seed=0, name="mlp"):
    """The MLP's variables (W1, b1, W2, b2), created where the device scope puts them."""
    rng = np.random.default_rng(seed)
    with tf.variable_scope(name):
        shapes = {"W1": (N_INPUTS, n_hidden), "W2": (n_hidden, N_OUTPUTS)}
        params = {}
        for layer, (n_in, n_out) in shapes.items():
            init = rng.normal(0.0, np.sqrt(2.0 / n_in), (n_in, n_out)).astype(np.float32)
            params[layer] = tf.Variable(init, name=layer)
            params["b" + layer[1]] = tf.Variable(np.zeros(n_out, np.float32),
                                                 name="b" + layer[1])
    return params


def logits(tf, params, X):
    hidden = tf.nn.relu(tf.matmul(X, params["W1"]) + params["b1"])
    return tf.matmul(hidden, params["W2"]) + params["b2"]


def loss(tf, params, X, y):
    xentropy = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                              logits=logits(tf, params, X))
    return tf.reduce_mean(xentropy)


def placeholders(tf):
    return (tf.placeholder(tf.float32, [None, N_INPUTS], name="X"),
            tf.placeholder(tf.int64, [None], name="y"))


def accuracy(predicted_logits, labels):
    return float(np.mean(np.argmax(predicted_logits, axis=1) == labels))
