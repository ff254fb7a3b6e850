"""The integrity section of a survey's quality report: flags with their evidence, per written reply and
per worker, and each worker's competence as MACE and Dawid-Skene estimate it.

Reads the database once and hands plain rows to the pure engines of `annotation.quality.integrity`;
the quality recompute caches the result with the rest of the report (`recompute.quality_recompute`),
so a page never computes it. Flags send a researcher to read an answer: none of them is a verdict.
Rejected work is left out, as the rest of the report leaves it out.
"""

from annotation.kinds.registry import kind_for
from annotation.models import Assignment, Context, WrittenResponse
from annotation.quality import data
from annotation.quality.integrity import rating_flags, writing_flags
from annotation.quality.integrity.dawid_skene import dawid_skene
from annotation.quality.integrity.mace import mace
from annotation.quality.integrity.similarity import WrittenAnswer, near_duplicate_flags
from annotation.quality.integrity.thresholds import DEFAULTS

# The order the page lists a worker's flags in: the written reply's, then the ratings'.
REPLY_FLAGS = (writing_flags.MOSTLY_PASTED, writing_flags.TYPED_TOO_FAST, writing_flags.LENGTH_BEYOND_TYPED,
               "near_duplicate")
RATING_FLAGS = (rating_flags.STRAIGHT_LINING, rating_flags.NEAR_ZERO_VARIANCE, rating_flags.ONE_SIDE_ALWAYS,
                rating_flags.TOO_FAST, rating_flags.FAR_FROM_CONSENSUS)
FLAG_WORDS = {
    writing_flags.MOSTLY_PASTED: "mostly pasted",
    writing_flags.TYPED_TOO_FAST: "typed faster than a person types",
    writing_flags.LENGTH_BEYOND_TYPED: "longer than what was typed or pasted",
    "near_duplicate": "near-duplicate of another worker's reply",
    rating_flags.STRAIGHT_LINING: "the same answer nearly always",
    rating_flags.NEAR_ZERO_VARIANCE: "ratings barely vary",
    rating_flags.ONE_SIDE_ALWAYS: "one side nearly always chosen",
    rating_flags.TOO_FAST: "much faster than the crowd",
    rating_flags.FAR_FROM_CONSENSUS: "far from the other raters",
}
# MACE and Dawid-Skene need several workers sharing items; below this many shared answers they say nothing.
MIN_MODEL_ANSWERS = 10


def written_rows(survey):
    """The survey's written replies (rejected assignments left out), oldest first, as plain dicts."""
    return list(
        WrittenResponse.objects.filter(assignment__hit__survey=survey)
        .exclude(assignment__status=Assignment.Status.REJECTED)
        .order_by("pk")
        .values("pk", "assignment__annotator_id", "context_id", "text", "telemetry", "created_at")
    )


def _context_texts(context_ids):
    texts = {}
    for pk, turns in Context.objects.filter(pk__in=context_ids).values_list("pk", "turns"):
        texts[pk] = " ".join(turn.get("text", "") if isinstance(turn, dict) else str(turn) for turn in turns or [])
    return texts


def reply_flags(rows, *, thresholds=DEFAULTS):
    """`{written pk: {flag name: Flag}}` for `written_rows`: the telemetry flags (none for a reply
    without telemetry) and the near-duplicate flag (against earlier replies by other workers to the
    same context, the context's own words left out)."""
    answers = [
        WrittenAnswer(row["pk"], row["assignment__annotator_id"], row["context_id"], row["text"],
                      row["created_at"].timestamp())
        for row in rows
    ]
    duplicates = near_duplicate_flags(
        answers, thresholds=thresholds, context_texts=_context_texts({row["context_id"] for row in rows})
    )
    flags = {}
    for row in rows:
        found = dict(writing_flags.telemetry_flags(row["telemetry"] or {}, thresholds=thresholds))
        found[duplicates[row["pk"]].name] = duplicates[row["pk"]]
        flags[row["pk"]] = found
    return flags


def raised_names(flags):
    """The names of the raised flags among one answer's `flags`, in the page's order."""
    return [name for name in REPLY_FLAGS if name in flags and flags[name].raised]


def _flag_out(flag, labels):
    evidence = dict(flag.evidence)
    if "other_worker" in evidence:  # named as the report names workers (pseudonymised with it)
        evidence["other_worker"] = labels.get(evidence["other_worker"], evidence["other_worker"])
    return {"name": flag.name, "words": FLAG_WORDS.get(flag.name, flag.name), "rule": flag.rule,
            "evidence": evidence}


def _rating_flags(survey, rows):
    """`{annotator_id: [Flag]}` of the carelessness flags on a survey's ratings (or judgements)."""
    kind = kind_for(survey)
    scores, seconds = {}, {}
    for row in rows:
        scores.setdefault(row["annotator_id"], []).append(row["score"])
        if row.get("seconds") is not None:
            seconds.setdefault(row["annotator_id"], []).append(row["seconds"])
    numeric = not kind.nominal and all(isinstance(s, int | float) for values in scores.values() for s in values)
    flags = {worker: [rating_flags.straight_lining(values)] for worker, values in scores.items()}
    if numeric:
        for worker, values in scores.items():
            flags[worker].append(rating_flags.near_zero_variance(values))
        consensus = rating_flags.far_from_consensus([(r["annotator_id"], r["response_id"], r["score"]) for r in rows])
        for worker, flag in consensus.items():
            flags[worker].append(flag)
    for worker, flag in rating_flags.too_fast(seconds).items():
        flags.setdefault(worker, []).append(flag)
    counts = kind.pair_counts(survey)
    if counts:
        for worker, (left, decisive) in counts[0].items():
            sides = ["left"] * left + ["right"] * (decisive - left)
            flags.setdefault(worker, []).append(rating_flags.one_side_always(sides))
    return flags


def _competence(rows, scale):
    """`{annotator_id: {"mace": θ, "dawid_skene": accuracy, "expected_distance": ...}}`, or {} when the
    answers are too few or no item was answered twice (the models have nothing to compare)."""
    seen, answers = set(), []
    for row in rows:
        key = (row["annotator_id"], row["response_id"])
        if key not in seen:  # a second answer to one item (another question of it) would count twice
            seen.add(key)
            answers.append((row["annotator_id"], row["response_id"], row["score"]))
    per_item = {}
    for _, item, _ in answers:
        per_item[item] = per_item.get(item, 0) + 1
    shared = sum(n for n in per_item.values() if n > 1)
    if shared < MIN_MODEL_ANSWERS or len({w for w, _, _ in answers}) < 2:
        return {}
    labels = [label for label in scale if label in {a for _, _, a in answers}] or None
    if labels and {a for _, _, a in answers} - set(labels):
        labels = None
    by_mace = mace(answers, labels=labels)
    by_ds = dawid_skene(answers, labels=labels)
    return {
        worker: {
            "mace": by_mace.competence[worker],
            "dawid_skene": by_ds.competence[worker],
            "expected_distance": by_ds.expected_distance.get(worker),
        }
        for worker in by_mace.competence
    }


def survey_integrity(survey, *, thresholds=DEFAULTS):
    """The integrity section (plain dicts, ready for JSON; workers named by their report labels)."""
    replies = written_rows(survey)
    rows = kind_for(survey).quality_rows(survey)
    by_reply = reply_flags(replies, thresholds=thresholds)
    by_rater = _rating_flags(survey, rows)
    competence = _competence(rows, kind_for(survey).quality_scale(survey))
    workers = {row["assignment__annotator_id"] for row in replies} | set(by_rater) | set(competence)
    labels = data.annotator_labels(workers)
    entries = {w: {"annotator_id": w, "worker": labels[w], "replies": 0, "with_telemetry": 0,
                   "reply_flags": {}, "rating_flags": [], "competence": competence.get(w)} for w in workers}
    flagged_replies = []
    for row in replies:
        entry = entries[row["assignment__annotator_id"]]
        entry["replies"] += 1
        entry["with_telemetry"] += bool(row["telemetry"])
        flags = by_reply[row["pk"]]
        for name in REPLY_FLAGS:
            if name in flags:
                counted = entry["reply_flags"].setdefault(name, {"raised": 0, "of": 0, "words": FLAG_WORDS[name]})
                counted["of"] += 1
                counted["raised"] += flags[name].raised
        raised = raised_names(flags)
        if raised:
            flagged_replies.append({
                "written": row["pk"], "annotator_id": entry["annotator_id"], "worker": entry["worker"],
                "context_id": row["context_id"], "flags": [_flag_out(flags[name], labels) for name in raised],
            })
    for worker, flags in by_rater.items():
        entries[worker]["rating_flags"] = [_flag_out(flag, labels) for flag in flags if flag.raised]
    for entry in entries.values():
        entry["flagged"] = bool(entry["rating_flags"]) or any(c["raised"] for c in entry["reply_flags"].values())
        # The share of replies with each flag: what the flag-based exclusion rules compare.
        entry["reply_shares"] = {name: c["raised"] / c["of"] for name, c in entry["reply_flags"].items() if c["of"]}
    return {
        "n_replies": len(replies),
        "n_with_telemetry": sum(1 for row in replies if row["telemetry"]),
        "flagged_replies": flagged_replies,
        "workers": sorted(entries.values(), key=lambda e: (not e["flagged"], e["worker"])),
        "models": bool(competence),
    }
