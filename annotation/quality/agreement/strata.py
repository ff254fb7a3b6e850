"""Agreement of a survey whose questions have scales of their own (a conversation survey: overall
1-5, engaging 0-2, per-turn quality 1-5), judged per question and then combined (pure, no Django).

Cohen's kappa needs one scale: pooling a 0-2 and a 1-5 question into one table would weigh a
one-point difference differently per question and compute chance agreement from a mixture of
their marginals. So each question ("stratum") gets its own pairwise kappas on its own scale, and
a pair of annotators is then judged by the mean of its kappas over the questions on which it is
used (enough shared items and a defined kappa), each question counting once however many items
it has: a survey's many per-turn answers do not drown its few whole-conversation ones.
"""

from statistics import fmean

from annotation.quality.agreement.kappa import WEIGHTINGS, PairAgreement, pairwise_agreement


def stratified_agreement(strata, *, min_overlap=1):
    """`(pairs, by_stratum)` for `strata` = `{name: (ratings [(annotator, item, score)], scale)}`.

    `by_stratum[name]`: that question's `PairAgreement`s (`kappa.pairwise_agreement`, with
    `min_overlap` per question). `pairs`: one combined `PairAgreement` per pair of annotators who
    share an item of some question: `n` the shared items over all questions, each kappa the mean
    of the pair's kappas (of that weighting) over the questions where the pair is used, `used`
    when there is one such question at least."""
    by_stratum = {
        name: pairwise_agreement(ratings, scale=scale, min_overlap=min_overlap)
        for name, (ratings, scale) in strata.items()
    }
    grouped = {}
    for pairs in by_stratum.values():
        for pair in pairs:
            grouped.setdefault((pair.a, pair.b), []).append(pair)
    combined = []
    for (a, b), pairs in sorted(grouped.items()):
        used = [pair for pair in pairs if pair.used]
        kappas = {
            key: (fmean(values) if (values := [getattr(p, key) for p in used if getattr(p, key) is not None]) else None)
            for key in WEIGHTINGS.values()
        }
        combined.append(PairAgreement(a=a, b=b, n=sum(p.n for p in pairs), used=bool(used), **kappas))
    return combined, by_stratum
