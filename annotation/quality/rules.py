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
- `position` (pairwise surveys): the annotator's share of decisive choices (ties left out) that
  went to the reply shown on the left is further from one half than `max_position_bias`, over at
  least `min_position_judgements` such choices. A plain threshold with a minimum count rather than
  a significance test: the researcher reads it as "picks left more than 80% of the time", the
  audit re-judges it from two stored counts, and at 0.3 over 20 choices an annotator who picks
  sides at random is caught with probability 0.003 (binomial); the quality page still shows each
  annotator's two-sided binomial p-value beside it.
- `consistency` (pairwise surveys): the share of swapped repeats answered consistently (A on one
  is B on the other, a tie stays a tie) is below `min_repeat_consistency`, over at least
  `min_repeats` repeats. An inconsistent repeat may be honest doubt about a close pair, so it is
  not an attention failure; this rule judges the share instead.
- `pasted` (integrity, issue 40): more than `max_pasted_share` of the worker's written replies are
  flagged "mostly pasted" (integrity.writing_flags). Replies without telemetry are not counted
  either way: the share is of the replies whose telemetry was recorded.
- `competence` (integrity): the worker's estimated competence from the survey's ratings (or judgements)
  is below `min_competence`: the ordinal spammer model's θ on a rating scale, MACE's θ otherwise (both the
  share of the worker's answers that follow the item). A worker the model could not estimate is not judged.
Both are off unless a survey sets them: a flag is evidence, and a researcher opts in to act on it.
A threshold of `None` (or a minimum of 0) switches its rule off; the two pairwise rules are off
unless a survey sets them, and an annotator with fewer choices or repeats than the minimum (or
none, as for imported judgements, whose sides are unknown) is not judged by them.
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
    left_choices: int = 0  # pairwise: decisive choices of the reply shown on the left
    decisive: int = 0  # pairwise: choices of a side (not ties) whose side is known
    repeats_consistent: int = 0  # pairwise: swapped repeats answered as the pair they repeat
    repeats_total: int = 0
    pasted_replies: int = 0  # written replies flagged "mostly pasted"
    telemetry_replies: int = 0  # written replies with telemetry (the share's denominator)
    competence: float | None = None  # the estimate, when the survey's answers allowed one
    competence_model: str | None = None  # which model made it ("ordinal spammer model", "MACE")


@dataclass
class Outcome:
    """The rules' verdict: `reasons` exclude, `flags` only ask a researcher to look."""

    excluded: bool
    reasons: list = field(default_factory=list)
    flags: list = field(default_factory=list)


def _over(pairs):
    return f" over {pairs} pair{'' if pairs == 1 else 's'}," if pairs else ""


def _plural(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"


def position_finding(evidence, max_position_bias, min_judgements):
    """The `position` rule's reason, or None (rule off, too few choices, or within bounds)."""
    if max_position_bias is None or not evidence.decisive or evidence.decisive < max(1, min_judgements or 0):
        return None
    share = evidence.left_choices / evidence.decisive
    if abs(share - 0.5) <= max_position_bias:
        return None
    return {
        "rule": "position",
        "detail": f"chose the left reply in {evidence.left_choices} of {_plural(evidence.decisive, 'decisive choice')}"
        f" ({share:.0%}), further than {max_position_bias:g} from one half",
        "value": share,
        "threshold": max_position_bias,
    }


def consistency_finding(evidence, min_repeat_consistency, min_repeats):
    """The `consistency` rule's reason, or None (rule off, too few repeats, or consistent enough)."""
    total = evidence.repeats_total
    if min_repeat_consistency is None or not total or total < max(1, min_repeats or 0):
        return None
    share = evidence.repeats_consistent / total
    if share >= min_repeat_consistency:
        return None
    return {
        "rule": "consistency",
        "detail": f"answered {evidence.repeats_consistent} of {_plural(total, 'swapped repeat')} consistently"
        f" ({share:.0%}), below {min_repeat_consistency:g}",
        "value": share,
        "threshold": min_repeat_consistency,
    }


def pasted_finding(evidence, max_pasted_share):
    """The `pasted` rule's reason, or None (rule off, no telemetry, or at most the share)."""
    total = evidence.telemetry_replies
    if max_pasted_share is None or not total:
        return None
    share = evidence.pasted_replies / total
    if share <= max_pasted_share:
        return None
    replies = "written reply" if total == 1 else "written replies"
    return {
        "rule": "pasted",
        "detail": f"{evidence.pasted_replies} of {total} {replies} flagged mostly pasted"
        f" ({share:.0%}), above {max_pasted_share:g}",
        "value": share,
        "threshold": max_pasted_share,
    }


def competence_finding(evidence, min_competence):
    """The `competence` rule's reason, or None (rule off, not estimated, or competent enough)."""
    if min_competence is None or evidence.competence is None or evidence.competence >= min_competence:
        return None
    return {
        "rule": "competence",
        "detail": f"estimated competence ({evidence.competence_model or 'MACE'}) {evidence.competence:.2f}, "
        f"below {min_competence:g}",
        "value": evidence.competence,
        "threshold": min_competence,
    }


def evaluate(
    evidence,
    *,
    kappa_threshold=0.2,
    min_seconds_per_item=None,
    attention_policy="flag",
    max_position_bias=None,
    min_position_judgements=0,
    min_repeat_consistency=None,
    min_repeats=0,
    max_pasted_share=None,
    min_competence=None,
):
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
    for finding in (
        position_finding(evidence, max_position_bias, min_position_judgements),
        consistency_finding(evidence, min_repeat_consistency, min_repeats),
        pasted_finding(evidence, max_pasted_share),
        competence_finding(evidence, min_competence),
    ):
        if finding:
            reasons.append(finding)
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
