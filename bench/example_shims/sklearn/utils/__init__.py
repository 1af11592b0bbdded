"""shuffle: the arrays permuted alike."""
import numpy as np


def shuffle(*arrays, random_state=None):
    """Return the arrays in one random order (one array alone is returned alone)."""
    rng = np.random.RandomState(random_state) if not isinstance(
        random_state, np.random.RandomState) else random_state
    order = rng.permutation(len(arrays[0]))
    out = [a[order] for a in arrays]
    return out[0] if len(out) == 1 else out
