"""Near-duplicate answers: word n-gram overlap, with an optional hook for sentence-embedding vectors.

Two workers answering one context independently share almost no word trigrams; a copy with a few words
changed keeps most of them. Containment (shared / n-grams of the shorter answer) also catches a copy that
added a sentence, which Jaccard (shared / union) dilutes. The embedding hook takes vectors computed
outside this pure package (MiniLM, say), so a paraphrase that keeps the meaning but not the words can be
caught too; the hook only compares vectors and imports no model.
"""

import re
from dataclasses import dataclass

import numpy as np

from annotation.quality.integrity.evidence import Flag
from annotation.quality.integrity.thresholds import DEFAULTS

WORD = re.compile(r"\w+", re.UNICODE)
NEAR_DUPLICATE = "near_duplicate"


@dataclass(frozen=True)
class WrittenAnswer:
    answer: object  # the answer's id
    worker: object
    context: object  # answers are compared only within one context (the same question)
    text: str
    submitted_at: float | None = None  # seconds; the later of two near-duplicates is the copy


def word_ngrams(text, n):
    words = WORD.findall(text.lower())
    return {tuple(words[k : k + n]) for k in range(len(words) - n + 1)}


def overlap(a, b):
    """Jaccard and containment of two n-gram sets (None when either is empty)."""
    if not a or not b:
        return None, None
    shared = len(a & b)
    return shared / len(a | b), shared / min(len(a), len(b))


def cosine_similarity(u, v):
    u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    norm = np.linalg.norm(u) * np.linalg.norm(v)
    return float(u @ v / norm) if norm else None


def _is_copy_candidate(own, other):
    """`other` may be the source of `own`: another worker, and not submitted after it (when both times
    are known; when not, both answers of a near-duplicate pair are flagged)."""
    if other.worker == own.worker:
        return False
    if own.submitted_at is None or other.submitted_at is None:
        return True
    return other.submitted_at <= own.submitted_at


def _pair_evidence(own, other, grams, embeddings, thresholds):
    jaccard, containment = overlap(grams[own.answer], grams[other.answer])
    cosine = None
    if embeddings is not None and own.answer in embeddings and other.answer in embeddings:
        cosine = cosine_similarity(embeddings[own.answer], embeddings[other.answer])
    long_enough = min(len(grams[own.answer]), len(grams[other.answer])) >= thresholds.min_ngrams
    raised = bool(
        (long_enough and jaccard is not None
         and (jaccard >= thresholds.near_duplicate_jaccard or containment >= thresholds.near_duplicate_containment))
        or (cosine is not None and cosine >= thresholds.embedding_cosine)
    )
    evidence = {
        "other_answer": other.answer,
        "other_worker": other.worker,
        "other_first": other.submitted_at is not None and own.submitted_at is not None
        and other.submitted_at <= own.submitted_at,
        "jaccard": jaccard,
        "containment": containment,
        "shared_ngrams": len(grams[own.answer] & grams[other.answer]),
        "ngrams": len(grams[own.answer]),
        "cosine": cosine,
    }
    return raised, evidence


def _strength(evidence):
    return max(evidence["containment"] or 0.0, evidence["jaccard"] or 0.0, evidence["cosine"] or 0.0)


def near_duplicate_flags(answers, *, thresholds=DEFAULTS, embeddings=None):
    """One flag per answer: its closest earlier answer by another worker on the same context.

    `answers`: `WrittenAnswer`s. `embeddings`: optional {answer id: vector}. The evidence names the other
    answer and gives every similarity measured, raised or not."""
    answers = list(answers)
    grams = {a.answer: word_ngrams(a.text, thresholds.ngram) for a in answers}
    by_context = {}
    for answer in answers:
        by_context.setdefault(answer.context, []).append(answer)
    rule = (f"word {thresholds.ngram}-gram containment ≥ {thresholds.near_duplicate_containment} or Jaccard ≥ "
            f"{thresholds.near_duplicate_jaccard} (answers of ≥ {thresholds.min_ngrams} n-grams)"
            + (f", or embedding cosine ≥ {thresholds.embedding_cosine}" if embeddings is not None else ""))
    flags = {}
    for group in by_context.values():
        for own in group:
            best = None
            for other in group:
                if other is own or not _is_copy_candidate(own, other):
                    continue
                raised, evidence = _pair_evidence(own, other, grams, embeddings, thresholds)
                key = (raised, _strength(evidence))
                if best is None or key > best[0]:
                    best = (key, raised, evidence)
            if best is None:
                flags[own.answer] = Flag(NEAR_DUPLICATE, False, rule, {"other_answer": None})
            else:
                flags[own.answer] = Flag(NEAR_DUPLICATE, best[1], rule, best[2])
    return flags
