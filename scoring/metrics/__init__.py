"""RateLab's metric engine: pure Python/numpy (and torch for the neural metrics), no Django.

Importing the package registers every metric; see docs/metrics.md for definitions. Resources
(Java scorer, GloVe, WordNet, the MiniLM model) load lazily, once per process, on first use.
"""

from scoring.metrics import bleu, cider, glove, length, meteor, meteor_nltk, neural, rouge, variants
from scoring.metrics.registry import (
    Batch,
    Metric,
    MetricUnavailable,
    Progress,
    all_metrics,
    get,
    register,
    score,
)

variants.register_variants()

__all__ = [
    "Batch",
    "Metric",
    "MetricUnavailable",
    "Progress",
    "all_metrics",
    "bleu",
    "cider",
    "get",
    "glove",
    "length",
    "meteor",
    "meteor_nltk",
    "neural",
    "register",
    "rouge",
    "score",
]
