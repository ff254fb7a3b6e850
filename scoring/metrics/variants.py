"""`<metric>_nostop`: a base metric after removing stop words and punctuation (Liu et al. 2016, Table 4).

Stop words: the pinned English list of `stop-words==2018.7.23`; punctuation: tokens made only of
punctuation. Both response and references are filtered (text.strip_stopwords), then the base
metric runs unchanged. CIDEr has no variant: its idf would need a filtered corpus of its own.
"""

from scoring.metrics import registry
from scoring.metrics.registry import Batch, Metric, register
from scoring.metrics.text import strip_stopwords

BASES = (
    "bleu1",
    "bleu2",
    "bleu3",
    "bleu4",
    "rouge_l",
    "meteor",
    "embedding_average",
    "greedy_matching",
    "vector_extrema",
)
SUFFIX = "_nostop"
STOPWORDS = "stop-words==2018.7.23"


def _family(batch, names):
    filtered = Batch([strip_stopwords(h) for h in batch.hyps], [[strip_stopwords(r) for r in rs] for rs in batch.refs])
    bases = [name.removesuffix(SUFFIX) for name in names]
    scores = registry.score(filtered.hyps, filtered.refs, bases)
    return {base + SUFFIX: values for base, values in scores.items()}


def _needs(names):
    """The resources of the base families (METEOR's jar, the GloVe vectors) of the variants asked for."""
    keys = {}
    for name in names:
        base = registry.get(name.removesuffix(SUFFIX))
        keys.update(dict.fromkeys(registry.family_info(base.family).resource_keys(frozenset([base.name]))))
    return tuple(keys)


def register_variants():
    registry.describe_family(_family, "metrics without stop words", _needs)
    for base_name in BASES:
        base = registry.get(base_name)
        register(
            Metric(
                base_name + SUFFIX,
                f"{base.version}+sw1",
                _family,
                {**base.params, "stopwords": STOPWORDS, "punctuation": "removed"},
                f"{base_name} without stop words and punctuation.",
                forks_cheaply=base.forks_cheaply,
            )
        )
