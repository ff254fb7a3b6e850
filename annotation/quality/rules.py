"""Automatic exclusion rules: pure, no Django.

Three rules, each as in the seed studies or the survey's settings:
- `attention`: the annotator failed an attention check. Whether that excludes depends on the
  survey's attention policy: `exclude` excludes the annotator; `flag` only flags (a researcher
  decides); `reject` rejects the failing assignment, whose ratings are then dropped on their own,
  so the annotator's other work still counts.
- `kappa`: the annotator's mean pairwise kappa is below the threshold (Liu et al. 2016 and Lowe
  et al. 2017 used 0.2). The mean is taken over the partners who agree with one another (see
  `agreement.consensus_kappas`), so careless partners do not drag careful annotators under.
  An annotator with no usable pair has no kappa and is not judged by it.
- `speed`: the median seconds per item is below the minimum (implausibly fast work). Imported
  ratings have no timing and are not judged by it.
A threshold of `None` (or a minimum of 0) switches its rule off.
"""

from dataclasses import dataclass, field

POLICY_EXCLUDE = "exclude"


@dataclass
class AnnotatorEvidence:
    """What the rules look at for one annotator in one survey."""

    worker: str
    kappa: float | None = None
    kappa_pairs: int = 0  # the pairs `kappa` is the mean of
    attention_total: int = 0
    attention_failed: int = 0
    median_seconds: float | None = None


@dataclass
class Outcome:
    """The rules' verdict: `reasons` exclude, `flags` only ask a researcher to look."""

    excluded: bool
    reasons: list = field(default_factory=list)
    flags: list = field(default_factory=list)


def _over(pairs):
    return f" over {pairs} pair{'' if pairs == 1 else 's'}," if pairs else ""


def evaluate(evidence, *, kappa_threshold=0.2, min_seconds_per_item=None, attention_policy="flag"):
    """Apply the rules to one annotator's evidence; returns an `Outcome`."""
    reasons, flags = [], []
    if evidence.attention_failed:
        finding = {
            "rule": "attention",
            "detail": f"failed {evidence.attention_failed} of {evidence.attention_total} attention check"
            + ("" if evidence.attention_total == 1 else "s"),
            "value": evidence.attention_failed,
            "threshold": 0,
        }
        (reasons if attention_policy == POLICY_EXCLUDE else flags).append(finding)
    if kappa_threshold is not None and evidence.kappa is not None and evidence.kappa < kappa_threshold:
        reasons.append(
            {
                "rule": "kappa",
                "detail": f"mean kappa {evidence.kappa:.3f}{_over(evidence.kappa_pairs)} below {kappa_threshold:g}",
                "value": evidence.kappa,
                "threshold": kappa_threshold,
            }
        )
    if min_seconds_per_item and evidence.median_seconds is not None and evidence.median_seconds < min_seconds_per_item:
        reasons.append(
            {
                "rule": "speed",
                "detail": f"median {evidence.median_seconds:.2f} s per item, below {min_seconds_per_item:g} s",
                "value": evidence.median_seconds,
                "threshold": min_seconds_per_item,
            }
        )
    return Outcome(excluded=bool(reasons), reasons=reasons, flags=flags)


def effective_decision(decisions):
    """Fold an annotator's decisions (oldest first) into the one that holds, or `None`.

    Each decision is a mapping with at least `source`. A manual override holds until a later
    `reset`; automatic decisions hold otherwise, the latest one winning.
    """
    latest_auto = None
    override = None
    for decision in decisions:
        source = decision["source"]
        if source == "auto":
            latest_auto = decision
        elif source == "manual":
            override = decision
        elif source == "reset":
            override = None
    return override or latest_auto
