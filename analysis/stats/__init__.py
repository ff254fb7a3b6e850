"""Pure statistics for the correlation report: numpy and scipy only, no Django.

Everything takes and returns plain Python or numpy values, so it is tested without a database.
"""

from analysis.stats.bootstrap import bootstrap_correlations, correlations_from_counts, resample_counts
from analysis.stats.correlation import correlate, fisher_interval, pairwise_williams, williams_test
from analysis.stats.tables import (
    failure_analysis,
    length_bias,
    normalise_to_human,
    stopword_table,
    system_level,
    utterance_level,
)

__all__ = [
    "bootstrap_correlations",
    "correlate",
    "correlations_from_counts",
    "failure_analysis",
    "fisher_interval",
    "length_bias",
    "normalise_to_human",
    "pairwise_williams",
    "resample_counts",
    "stopword_table",
    "system_level",
    "utterance_level",
    "williams_test",
]
