"""Random indices for the shuffling resources (RandomShuffleQueue, Dataset.shuffle)."""


class RandomIndices:
    """Uniform indices below `n` from a numpy Generator, its draws taken 256 at a time:
    one draw costs microseconds, as much as the rest of taking an element."""

    __slots__ = ("_rng", "_uniforms")

    def __init__(self, rng):
        self._rng = rng
        self._uniforms = []

    def below(self, n):
        """A uniform random index in [0, n)."""
        if not self._uniforms:
            self._uniforms = self._rng.random(256).tolist()
        return int(self._uniforms.pop() * n)
