"""Random indices for the shuffling resources (RandomShuffleQueue, Dataset.shuffle)."""


class RandomIndices:
    """Uniform indices below `n`, each the next 32-bit word of a stream modulo `n`, as
    TensorFlow's RandomShuffleQueue takes them. `batches` yields the words in order, an
    array at a time: a word costs microseconds alone, as much as the rest of taking an
    element."""

    __slots__ = ("_batches", "_words")

    def __init__(self, batches):
        self._batches = batches
        self._words = []

    def below(self, n):
        """A uniform random index in [0, n)."""
        if not self._words:
            self._words = next(self._batches).tolist()[::-1]
        return self._words.pop() % n
