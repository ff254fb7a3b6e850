"""A simulated annotator's pairwise choices, for the demo, the tests and the benchmarks.

The reply of higher latent quality (`kinds.simulated.latent_quality`, plus noise) wins; close
calls tie where ties are allowed; a careless annotator chooses at random; a straight-liner always
picks the reply shown first (on the left).
"""

from annotation.kinds.simulated import STRAIGHT_LINER, latent_quality
from annotation.models import HITItem

# The better reply wins unless noise ~ N(0, 0.15) on the quality gap reverses it, and a gap under
# 0.05 reads as a tie (where ties are allowed).
PAIR_NOISE_SD = 0.15
TIE_MARGIN = 0.05


def simulated_choice(annotator, item, survey):
    """One pairwise choice ("a", "b" or "tie") of `annotator` (a `SimulatedAnnotator`)."""
    options = ["a", "b", "tie"] if survey.allow_tie else ["a", "b"]
    if annotator.role == STRAIGHT_LINER:
        return "a"
    if annotator.careless:
        return annotator.rng.choice(options)
    if item.kind == HITItem.Kind.PAIR_GOLD:
        return "a" if item.response_id else "b"
    gap = latent_quality(item.response) - latent_quality(item.response_b) + annotator.rng.gauss(0, PAIR_NOISE_SD)
    if survey.allow_tie and abs(gap) < TIE_MARGIN:
        return "tie"
    return "a" if gap > 0 else "b"


def simulated_judgements(annotator, *, items, aspects, survey):
    """The answers to one assignment's pair items, every question of each, with the seconds taken."""
    answers = {}
    for item in items:
        seconds = annotator.seconds(4, 15)
        answers[item.pk] = {
            "scores": {a.key: simulated_choice(annotator, item, survey) for a in aspects},
            "seconds": seconds,
        }
    return answers
