"""Rows stacked along a new first axis, the way batches are made."""

import numpy as np


def stack(rows):
    """np.stack(rows). np.array builds the same array several times faster (a third of
    the time for 128 rows, a sixth for 10 scalars) and checks the rows' shapes as it
    goes; rows that hold objects, which np.array would look inside, and anything it
    shapes otherwise go to np.stack, which also words the error for ragged rows."""
    first = rows[0]
    if isinstance(first, np.ndarray) and not first.dtype.hasobject:
        try:
            out = np.array(rows)
        except ValueError:  # ragged, or objects further down: np.stack decides
            return np.stack(rows)
        if not out.dtype.hasobject and out.shape == (len(rows), *first.shape):
            return out
    return np.stack(rows)
