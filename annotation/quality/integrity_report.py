"""The integrity section of a survey's quality report: flags with their evidence, per written reply and
per worker, and each worker's competence as MACE and Dawid-Skene estimate it, and on a rating scale as the
ordinal spammer model does (the estimate the `competence` rule reads there; MACE's elsewhere).

Reads the database once and hands plain rows to the pure engines of `annotation.quality.integrity`;
the quality recompute caches the result with the rest of the report (`recompute.quality_recompute`),
so a page never computes it. Flags send a researcher to read an answer: none of them is a verdict.
Rejected work is left out, as the rest of the report leaves it out.
"""

from itertools import pairwise

from django.conf import settings

from annotation.kinds.registry import kind_for
from annotation.models import Assignment, Context, WrittenResponse
from annotation.quality import data
from annotation.quality.integrity import rating_flags, writing_flags
from annotation.quality.integrity.dawid_skene import dawid_skene
from annotation.quality.integrity.evidence import Flag
from annotation.quality.integrity.mace import mace
from annotation.quality.integrity.ordinal_spammer import ordinal_spammer
from annotation.quality.integrity.similarity import (
    REFERENCE_LLM,
    WrittenAnswer,
    near_duplicate_flags,
    reference_llm_flags,
)
from annotation.quality.integrity.thresholds import DEFAULTS
from annotation.services.extensions.points import sentence_encoder

# The order the page lists a worker's flags in: the written reply's, then the ratings'.
REPLY_FLAGS = (
    writing_flags.MOSTLY_PASTED,
    writing_flags.TYPED_TOO_FAST,
    writing_flags.LENGTH_BEYOND_TYPED,
    "near_duplicate",
    REFERENCE_LLM,
)
RATING_FLAGS = (
    rating_flags.STRAIGHT_LINING,
    rating_flags.NEAR_ZERO_VARIANCE,
    rating_flags.ONE_SIDE_ALWAYS,
    rating_flags.TOO_FAST,
    rating_flags.FAR_FROM_CONSENSUS,
)
FLAG_WORDS = {
    writing_flags.MOSTLY_PASTED: "mostly pasted",
    writing_flags.TYPED_TOO_FAST: "typed faster than a person types",
    writing_flags.LENGTH_BEYOND_TYPED: "longer than what was typed or pasted",
    "near_duplicate": "near-duplicate of another worker's reply",
    REFERENCE_LLM: "very like the reference LLM's reply",
    rating_flags.STRAIGHT_LINING: "the same answer nearly always",
    rating_flags.NEAR_ZERO_VARIANCE: "ratings barely vary",
    rating_flags.ONE_SIDE_ALWAYS: "one side nearly always chosen",
    rating_flags.TOO_FAST: "much faster than the crowd",
    rating_flags.FAR_FROM_CONSENSUS: "far from the other raters",
}
# MACE and Dawid-Skene need several workers sharing items; below this many shared answers they say nothing.
MIN_MODEL_ANSWERS = 10
# Which estimate the `competence` rule and the exports' headline read, by key: the ordinal spammer model on
# a rating scale (it ranks simulated raters best: docs/integrity.md), MACE on anything else.
COMPETENCE_MODELS = {"ordinal": "ordinal spammer model", "mace": "MACE"}


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


def embeddings_on():
    """Whether the similarity flags compare MiniLM sentence vectors too (`INTEGRITY_EMBEDDINGS`, on by
    default; an encoder must be registered, as scoring registers MiniLM's)."""
    return bool(getattr(settings, "INTEGRITY_EMBEDDINGS", True)) and sentence_encoder() is not None


# Vectors already computed in this process, by text: a recompute encodes only the replies that are new
# (and `prepare_vectors` fills this before the recompute's transaction, so no lock waits on the model).
_VECTORS = {}
MAX_CACHED_VECTORS = 50_000


def sentence_vectors(texts):
    """`{text: unit vector}` from the registered encoder, or None when embeddings are off."""
    if not embeddings_on():
        return None
    wanted = {text for text in texts if text and text.strip()}
    missing = sorted(wanted - set(_VECTORS))
    if missing:
        if len(_VECTORS) + len(missing) > MAX_CACHED_VECTORS:
            _VECTORS.clear()
        _VECTORS.update(sentence_encoder()(missing))
    return {text: _VECTORS[text] for text in wanted if text in _VECTORS}


def prepare_vectors(survey):
    """Encode the survey's replies and reference samples now (loading the model if need be), so that a
    recompute inside a transaction finds them cached. Nothing when embeddings are off or nothing is written."""
    if not embeddings_on():
        return
    rows = written_rows(survey)
    if not rows:
        return
    references = kind_for(survey).reference_llm_samples(survey, {row["context_id"] for row in rows})
    sentence_vectors([row["text"] for row in rows] + [text for samples in references.values() for _, text in samples])


def reply_flags(rows, *, thresholds=DEFAULTS, references=None, embeddings="auto"):
    """`{written pk: {flag name: Flag}}` for `written_rows`: the telemetry flags (none for a reply
    without telemetry), the near-duplicate flag (against earlier replies by other workers to the
    same context, the context's own words left out) and, when `references` ({context: [(sample, text)]})
    are given, the reference-LLM flag. `embeddings`: {text: vector}, None (n-grams only) or "auto" (the
    registered MiniLM encoder when `INTEGRITY_EMBEDDINGS` is on)."""
    answers = [
        WrittenAnswer(
            row["pk"], row["assignment__annotator_id"], row["context_id"], row["text"], row["created_at"].timestamp()
        )
        for row in rows
    ]
    references = references or {}
    if embeddings == "auto":
        texts = [row["text"] for row in rows] + [text for samples in references.values() for _, text in samples]
        embeddings = sentence_vectors(texts) if rows else None
    context_texts = _context_texts({row["context_id"] for row in rows})
    by_answer = None if embeddings is None else {a.answer: embeddings.get(a.text) for a in answers}
    if by_answer is not None:
        by_answer = {k: v for k, v in by_answer.items() if v is not None}
    duplicates = near_duplicate_flags(answers, thresholds=thresholds, embeddings=by_answer, context_texts=context_texts)
    like_llm = (
        reference_llm_flags(
            answers, references, thresholds=thresholds, embeddings=embeddings, context_texts=context_texts
        )
        if references
        else {}
    )
    flags = {}
    for row in rows:
        found = dict(writing_flags.telemetry_flags(row["telemetry"] or {}, thresholds=thresholds))
        found[duplicates[row["pk"]].name] = duplicates[row["pk"]]
        if row["pk"] in like_llm:
            found[REFERENCE_LLM] = like_llm[row["pk"]]
        flags[row["pk"]] = found
    return flags


def survey_reply_flags(survey, rows, *, thresholds=DEFAULTS):
    """`reply_flags` of a survey's `written_rows`, with its reference LLM's samples when it names one."""
    references = kind_for(survey).reference_llm_samples(survey, {row["context_id"] for row in rows})
    return reply_flags(rows, thresholds=thresholds, references=references)


def raised_names(flags):
    """The names of the raised flags among one answer's `flags`, in the page's order."""
    return [name for name in REPLY_FLAGS if name in flags and flags[name].raised]


def _flag_out(flag, labels):
    evidence = dict(flag.evidence)
    if "other_worker" in evidence:  # named as the report names workers (pseudonymised with it)
        evidence["other_worker"] = labels.get(evidence["other_worker"], evidence["other_worker"])
    return {"name": flag.name, "words": FLAG_WORDS.get(flag.name, flag.name), "rule": flag.rule, "evidence": evidence}


def _rating_flags(survey, rows):
    """`{annotator_id: [Flag]}` of the carelessness flags on a survey's ratings (or judgements).

    Rows that carry their `aspect` (a kind whose rules judge several questions, each on its own
    scale: `TaskKind.quality_strata`) are judged per question (`_per_aspect_flags`)."""
    kind = kind_for(survey)
    flags = {}
    if kind.quality_strata(survey):
        flags = _per_aspect_flags(rows)
    else:
        scores = {}
        for row in rows:
            scores.setdefault(row["annotator_id"], []).append(row["score"])
        numeric = not kind.nominal and all(isinstance(s, int | float) for values in scores.values() for s in values)
        for worker, flag in _score_flags(rows, numeric=numeric).items():
            flags.setdefault(worker, []).extend(flag)
    seconds = {}
    for row in rows:
        if row.get("seconds") is not None:
            seconds.setdefault(row["annotator_id"], []).append(row["seconds"])
    for worker, flag in rating_flags.too_fast(seconds).items():
        flags.setdefault(worker, []).append(flag)
    counts = kind.pair_counts(survey)
    if counts:
        for worker, (left, decisive) in counts[0].items():
            sides = ["left"] * left + ["right"] * (decisive - left)
            flags.setdefault(worker, []).append(rating_flags.one_side_always(sides))
    return flags


def _score_flags(rows, *, numeric):
    """`{annotator_id: [Flag]}`: straight-lining, and on a numeric scale near-zero variance and far
    from consensus, over `rows` (one question, or one scale for all)."""
    scores = {}
    for row in rows:
        scores.setdefault(row["annotator_id"], []).append(row["score"])
    flags = {worker: [rating_flags.straight_lining(values)] for worker, values in scores.items()}
    if numeric:
        for worker, values in scores.items():
            flags[worker].append(rating_flags.near_zero_variance(values))
        consensus = rating_flags.far_from_consensus([(r["annotator_id"], r["response_id"], r["score"]) for r in rows])
        for worker, flag in consensus.items():
            flags[worker].append(flag)
    return flags


def _per_aspect_flags(rows):
    """Each flag judged on each question apart (one question's 1-5 and another's 0-2 never mix; a
    worker is compared with the crowd on the same question), then one flag per worker and name:
    raised when raised on more than half of the questions the worker answered, its evidence the
    numbers of the first question where it was raised (or of the first question), the question
    named, and on which questions it was raised. One question alone judges as before; a careful
    annotator who gives nearly every conversation "consistent: 5" is not flagged for that one
    question while their others vary."""
    by_aspect = {}
    for row in rows:
        by_aspect.setdefault(row["aspect"], []).append(row)
    judged = {}  # (worker, flag name) -> [(aspect, Flag)]
    for aspect, aspect_rows in by_aspect.items():
        for worker, flags in _score_flags(aspect_rows, numeric=True).items():
            for flag in flags:
                judged.setdefault((worker, flag.name), []).append((aspect, flag))
    combined = {}
    for (worker, name), per_aspect in judged.items():
        raised_on = [aspect for aspect, flag in per_aspect if flag.raised]
        shown_aspect, shown = next(((a, f) for a, f in per_aspect if f.raised), per_aspect[0])
        evidence = {"question": shown_aspect, **shown.evidence, "raised_on_questions": ", ".join(raised_on) or "none",
                    "questions_judged": len(per_aspect)}  # fmt: skip
        raised = 2 * len(raised_on) > len(per_aspect)
        rule = f"{shown.rule}, on more than half of the questions answered (each question judged apart)"
        combined.setdefault(worker, []).append(Flag(name, raised, rule, evidence))
    return combined


def ordinal_scale(scale):
    """The scale as the ordinal model reads it (its labels in order), or None when it is not an evenly
    spaced scale of at least three numbers (a yes/no, or labels that are not numbers)."""
    if len(scale) < 3 or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in scale):
        return None
    steps = {b - a for a, b in pairwise(scale)}
    return list(scale) if len(steps) == 1 and steps.pop() > 0 else None


def _competence(rows, scale, *, rates_on_a_scale=False):
    """`{annotator_id: {"mace": θ, "dawid_skene": accuracy, "expected_distance": ..., "ordinal": θ or None,
    "model": key of the estimate the rule reads}}`, or {} when the answers are too few or no item was
    answered twice (the models have nothing to compare)."""
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
    full_scale = ordinal_scale(scale) if rates_on_a_scale else None
    if full_scale and {a for _, _, a in answers} <= set(full_scale):
        ordinal = ordinal_spammer(answers, labels=full_scale).competence
    else:
        ordinal = {}
    return {
        worker: {
            "mace": by_mace.competence[worker],
            "dawid_skene": by_ds.competence[worker],
            "expected_distance": by_ds.expected_distance.get(worker),
            "ordinal": ordinal.get(worker),
            "model": "ordinal" if ordinal else "mace",
        }
        for worker in by_mace.competence
    }


def rule_competence(competence):
    """`(estimate, model name)` the `competence` rule reads from a worker's entry, or (None, None)."""
    if not competence:
        return None, None
    key = competence.get("model", "mace")  # reports cached before the ordinal model carry MACE's only
    return competence.get(key), COMPETENCE_MODELS[key]


def survey_integrity(survey, *, thresholds=DEFAULTS):
    """The integrity section (plain dicts, ready for JSON; workers named by their report labels)."""
    replies = written_rows(survey)
    kind = kind_for(survey)
    rows = kind.quality_rows(survey)
    references = kind.reference_llm_samples(survey, {row["context_id"] for row in replies})
    by_reply = reply_flags(replies, thresholds=thresholds, references=references)
    by_rater = _rating_flags(survey, rows)
    competence = _competence(rows, kind.quality_scale(survey), rates_on_a_scale=kind.rates_on_a_scale)
    workers = {row["assignment__annotator_id"] for row in replies} | set(by_rater) | set(competence)
    labels = data.annotator_labels(workers)
    entries = {
        w: {
            "annotator_id": w,
            "worker": labels[w],
            "replies": 0,
            "with_telemetry": 0,
            "reply_flags": {},
            "rating_flags": [],
            "competence": competence.get(w),
        }
        for w in workers
    }
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
            flagged_replies.append(
                {
                    "written": row["pk"],
                    "annotator_id": entry["annotator_id"],
                    "worker": entry["worker"],
                    "context_id": row["context_id"],
                    "flags": [_flag_out(flags[name], labels) for name in raised],
                }
            )
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
        # The model whose estimate the `competence` rule reads (the page and the exports name it).
        "competence_model": COMPETENCE_MODELS[next(iter(competence.values()))["model"]] if competence else None,
        # What the similarity flags compared: n-grams always; MiniLM sentence vectors when on; the reference
        # LLM's samples when the survey names them (how many contexts have one).
        "embeddings": embeddings_on(),
        "reference_llm_contexts": len(references),
    }
