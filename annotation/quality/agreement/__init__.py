"""Inter-annotator agreement: pure computation, no Django.

Input everywhere is a sequence of ratings `(annotator, item, score)`: annotator and item are any
hashable ids, score a value of the rating scale. Results are plain Python (floats, dicts, lists)
ready for JSON; an undefined statistic is `None`, never NaN.

The statistics come from maintained libraries (scikit-learn's `cohen_kappa_score`, the
`krippendorff` package, scipy's correlations); this package only arranges the data for them and
decides what "undefined" means. One module per statistic: `kappa` (pairs of annotators), `alpha`
(Krippendorff), `split_half` (random halves of the raters). The quality report reads them all
through this package (`agreement.<name>`).
"""

from annotation.quality.agreement.alpha import krippendorff_alpha
from annotation.quality.agreement.kappa import (
    SKLEARN_MAX_PAIRS,
    WEIGHTINGS,
    PairAgreement,
    annotator_kappas,
    cohen_kappas,
    consensus_kappas,
    kappa_histogram,
    kappa_matrix,
    median_kappa,
    pair_kappa,
    pairwise_agreement,
)
from annotation.quality.agreement.split_half import (
    SPLIT_ANNOTATORS,
    SPLIT_ITEMS,
    split_half_agreement,
    split_half_mode,
    split_halves,
)
from annotation.quality.agreement.strata import stratified_agreement

__all__ = [
    "SKLEARN_MAX_PAIRS",
    "SPLIT_ANNOTATORS",
    "SPLIT_ITEMS",
    "WEIGHTINGS",
    "PairAgreement",
    "annotator_kappas",
    "cohen_kappas",
    "consensus_kappas",
    "kappa_histogram",
    "kappa_matrix",
    "krippendorff_alpha",
    "median_kappa",
    "pair_kappa",
    "pairwise_agreement",
    "split_half_agreement",
    "split_half_mode",
    "split_halves",
    "stratified_agreement",
]
