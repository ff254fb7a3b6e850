"""PCA fitted on the training vectors only, so nothing about held-out texts leaks into the model."""

import numpy as np


class Pca:
    """Centre and project onto the top `n` principal directions (numpy SVD)."""

    def __init__(self, mean, components):
        self.mean = np.asarray(mean, dtype=np.float32)
        self.components = np.asarray(components, dtype=np.float32)  # (n, dim)

    @classmethod
    def fit(cls, vectors, n=50):
        vectors = np.asarray(vectors, dtype=np.float64)
        if vectors.ndim != 2 or vectors.shape[0] < 2:
            raise ValueError("PCA needs at least two training vectors")
        mean = vectors.mean(axis=0)
        # Economy SVD of the centred matrix: rows of vt are the principal directions.
        _, _, vt = np.linalg.svd(vectors - mean, full_matrices=False)
        n = min(n, vt.shape[0])
        return cls(mean, vt[:n])

    @property
    def n_components(self):
        return self.components.shape[0]

    def transform(self, vectors):
        return ((np.asarray(vectors, dtype=np.float32) - self.mean) @ self.components.T).astype(np.float32)

    def state(self):
        return {"mean": self.mean, "components": self.components}

    @classmethod
    def from_state(cls, state):
        return cls(state["mean"], state["components"])
