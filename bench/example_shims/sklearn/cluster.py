"""KMeans by Lloyd's iterations from k-means++ seeds (several starts, the best kept)."""
import numpy as np


def _seeds(x, k, rng):
    centres = [x[rng.randint(len(x))]]
    for _ in range(1, k):
        dist = np.min(((x[:, None, :] - np.array(centres)[None]) ** 2).sum(-1), axis=1)
        centres.append(x[rng.choice(len(x), p=dist / dist.sum())])
    return np.array(centres)


class KMeans:
    """fit_predict returns each row's cluster; cluster_centers_ holds the centres."""

    def __init__(self, n_clusters=8, n_init=10, max_iter=300, random_state=None, **kwargs):
        self.n_clusters, self.n_init, self.max_iter = n_clusters, n_init, max_iter
        self.random_state = random_state

    def _one(self, x, rng):
        centres = _seeds(x, self.n_clusters, rng)
        for _ in range(self.max_iter):
            dist = ((x[:, None, :] - centres[None]) ** 2).sum(-1)
            labels = dist.argmin(axis=1)
            moved = np.array([x[labels == j].mean(axis=0) if np.any(labels == j) else centres[j]
                              for j in range(self.n_clusters)])
            if np.allclose(moved, centres):
                break
            centres = moved
        return centres, labels, dist.min(axis=1).sum()

    def fit_predict(self, x):
        x = np.asarray(x, dtype=np.float64)
        rng = np.random.RandomState(self.random_state)
        best = min((self._one(x, rng) for _ in range(self.n_init)), key=lambda r: r[2])
        self.cluster_centers_, self.labels_, self.inertia_ = best
        return self.labels_

    def fit(self, x):
        self.fit_predict(x)
        return self
