"""The ADEM scoring function: score(c, r, r̂) = (cᵀ M r̂ + rᵀ N r̂ − α) / β."""

import numpy as np
import torch
from torch import nn

from scoring.adem.choices import VARIANTS


class Adem(nn.Module):
    """Bilinear ADEM over PCA-reduced vectors.

    M and N start as the identity, so before training the score is the (centred) dot-product
    similarity of the response to the context and to the reference. α and β are constants
    fitted once on the training data (see `fit_alpha_beta`); only M and N are learned.
    """

    def __init__(self, dim, variant="full", alpha=0.0, beta=1.0):
        super().__init__()
        if variant not in VARIANTS:
            raise ValueError(f"unknown ADEM variant {variant!r}; expected one of {', '.join(VARIANTS)}")
        self.variant = variant
        self.dim = dim
        self.M = nn.Parameter(torch.eye(dim)) if variant in ("full", "context") else None
        self.N = nn.Parameter(torch.eye(dim)) if variant in ("full", "reference") else None
        self.register_buffer("alpha", torch.tensor(float(alpha)))
        self.register_buffer("beta", torch.tensor(float(beta)))

    def raw(self, c, r, r_hat):
        """cᵀ M r̂ + rᵀ N r̂ for a batch (rows are examples)."""
        total = torch.zeros(r_hat.shape[0], dtype=r_hat.dtype, device=r_hat.device)
        if self.M is not None:
            total = total + ((c @ self.M) * r_hat).sum(dim=1)
        if self.N is not None:
            total = total + ((r @ self.N) * r_hat).sum(dim=1)
        return total

    def forward(self, c, r, r_hat):
        return (self.raw(c, r, r_hat) - self.alpha) / self.beta

    def penalty(self):
        """‖θ‖² over the learned matrices (θ = {M, N})."""
        return sum((p**2).sum() for p in (self.M, self.N) if p is not None)


def fit_alpha_beta(raw_scores, low, high):
    """α, β mapping the training set's initial raw scores onto the rating scale [low, high].

    Uses the 2nd and 98th percentiles rather than min/max, so one outlier does not squeeze
    every other initial prediction into the middle of the scale.
    """
    raw_scores = np.asarray(raw_scores, dtype=np.float64)
    lo_raw, hi_raw = np.percentile(raw_scores, [2, 98]) if raw_scores.size else (0.0, 1.0)
    if not np.isfinite(hi_raw - lo_raw) or hi_raw - lo_raw < 1e-8:
        # All responses look alike to the encoder: keep a unit scale centred on the scale's middle.
        return float(lo_raw - (low + high) / 2), 1.0
    beta = (hi_raw - lo_raw) / (high - low)
    alpha = lo_raw - low * beta
    return float(alpha), float(beta)


def build(dim, variant, c, r, r_hat, *, low, high):
    """An identity-initialised model whose α, β are fitted on the given training vectors."""
    model = Adem(dim, variant)
    with torch.no_grad():
        raw = model.raw(torch.as_tensor(c), torch.as_tensor(r), torch.as_tensor(r_hat)).numpy()
    alpha, beta = fit_alpha_beta(raw, low, high)
    model.alpha.fill_(alpha)
    model.beta.fill_(beta)
    return model
