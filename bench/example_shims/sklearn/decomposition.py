"""PCA by a thin SVD of the centred data."""
import numpy as np


class PCA:
    """Principal components: fit_transform projects on the first n_components."""

    def __init__(self, n_components=None):
        self.n_components = n_components

    def fit_transform(self, x):
        x = np.asarray(x, dtype=np.float64)
        centred = x - x.mean(axis=0)
        _, _, vt = np.linalg.svd(centred, full_matrices=False)
        self.components_ = vt[:self.n_components]
        return centred @ self.components_.T
