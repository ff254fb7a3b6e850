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


def words_of(text):
    return WORD.findall(text.lower())


def word_ngrams(text, n):
    words = words_of(text)
    return {tuple(words[k : k + n]) for k in range(len(words) - n + 1)}


def unquoted_ngrams(text, n, quoted):
    """Word n-grams of `text` that touch no word of a passage quoted from the context: every word inside
    an n-gram of `quoted` is masked, and an n-gram with a masked word is dropped, so the words that
    bridge a quote and the answer's own text are dropped too."""
    words = words_of(text)
    masked = [False] * len(words)
    for k in range(len(words) - n + 1):
        if tuple(words[k : k + n]) in quoted:
            masked[k : k + n] = [True] * n
    return {tuple(words[k : k + n]) for k in range(len(words) - n + 1) if not any(masked[k : k + n])}


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


def _pair_evidence(own, other, *, grams, words, embeddings, thresholds):
    jaccard, containment = overlap(grams[own.answer], grams[other.answer])
    identical = (words[own.answer] == words[other.answer]
                 and len(words[own.answer]) >= thresholds.min_identical_words)
    cosine = None
    if (embeddings is not None and own.answer in embeddings and other.answer in embeddings
            and min(len(words[own.answer]), len(words[other.answer])) >= thresholds.min_embedding_words):
        cosine = cosine_similarity(embeddings[own.answer], embeddings[other.answer])
    long_enough = min(len(grams[own.answer]), len(grams[other.answer])) >= thresholds.min_ngrams
    by = []  # which measures crossed their threshold
    if identical:
        by.append("identical")
    if long_enough and jaccard is not None and jaccard >= thresholds.near_duplicate_jaccard:
        by.append("jaccard")
    if long_enough and containment is not None and containment >= thresholds.near_duplicate_containment:
        by.append("containment")
    if cosine is not None and cosine >= thresholds.embedding_cosine:
        by.append("embedding")
    raised = bool(by)
    evidence = {
        "other_answer": other.answer,
        "other_worker": other.worker,
        "other_first": other.submitted_at is not None and own.submitted_at is not None
        and other.submitted_at <= own.submitted_at,
        "identical_words": identical,
        "jaccard": jaccard,
        "containment": containment,
        "shared_ngrams": len(grams[own.answer] & grams[other.answer]),
        "ngrams": len(grams[own.answer]),
        "cosine": cosine,
        "raised_by": by,
    }
    return raised, evidence


def _strength(evidence):
    return max(evidence["containment"] or 0.0, evidence["jaccard"] or 0.0, evidence["cosine"] or 0.0)


def near_duplicate_flags(answers, *, thresholds=DEFAULTS, embeddings=None, context_texts=None):
    """One flag per answer: its closest earlier answer by another worker on the same context.

    `answers`: `WrittenAnswer`s. `embeddings`: optional {answer id: vector}. `context_texts`: optional
    {context: the text the workers answered}; its n-grams are left out of the comparison, so two workers
    who both quote the question are not called copies of each other. The evidence names the other
    answer and gives every similarity measured, raised or not."""
    answers = list(answers)
    context_texts = context_texts or {}
    quoted = {c: word_ngrams(t, thresholds.ngram) for c, t in context_texts.items()}
    grams = {a.answer: unquoted_ngrams(a.text, thresholds.ngram, quoted.get(a.context, set())) for a in answers}
    words = {a.answer: words_of(a.text) for a in answers}
    by_context = {}
    for answer in answers:
        by_context.setdefault(answer.context, []).append(answer)
    rule = (f"the same words (≥ {thresholds.min_identical_words}), or word {thresholds.ngram}-gram containment ≥ "
            f"{thresholds.near_duplicate_containment} or Jaccard ≥ "
            f"{thresholds.near_duplicate_jaccard} (answers of ≥ {thresholds.min_ngrams} n-grams)"
            + (f", or embedding cosine ≥ {thresholds.embedding_cosine} (answers of ≥ "
               f"{thresholds.min_embedding_words} words)" if embeddings is not None else ""))
    flags = {}
    for group in by_context.values():
        for own in group:
            best = None
            for other in group:
                if other is own or not _is_copy_candidate(own, other):
                    continue
                raised, evidence = _pair_evidence(own, other, grams=grams, words=words, embeddings=embeddings,
                                                  thresholds=thresholds)
                key = (raised, _strength(evidence))
                if best is None or key > best[0]:
                    best = (key, raised, evidence)
            if best is None:
                flags[own.answer] = Flag(NEAR_DUPLICATE, False, rule, {"other_answer": None})
            else:
                flags[own.answer] = Flag(NEAR_DUPLICATE, best[1], rule, best[2])
    return flags


REFERENCE_LLM = "like_reference_llm"


def reference_llm_flags(answers, references, *, thresholds=DEFAULTS, embeddings=None, context_texts=None):
    """One flag per answer: how close it is to what a reference LLM wrote for the same context.

    `references`: {context: [(sample name, text)]}, the LLM's K samples for that context (imported with
    the dataset, one system per sample). `embeddings`: optional {text: vector} for answers and samples.
    The n-gram measures leave the context's own words out, as `near_duplicate_flags` does. The evidence
    names the closest sample and gives every measure; an answer whose context has no sample gets an
    unraised flag that says so (`samples`: 0), never a clean bill."""
    context_texts = context_texts or {}
    quoted = {c: word_ngrams(t, thresholds.ngram) for c, t in context_texts.items()}
    rule = (f"word {thresholds.ngram}-gram containment ≥ {thresholds.reference_containment} or Jaccard ≥ "
            f"{thresholds.near_duplicate_jaccard} with a sample of the reference LLM (answers of ≥ "
            f"{thresholds.min_ngrams} n-grams)"
            + (f", or embedding cosine ≥ {thresholds.reference_cosine} (answers of ≥ "
               f"{thresholds.min_embedding_words} words)" if embeddings is not None else ""))
    flags = {}
    for answer in answers:
        samples = references.get(answer.context) or []
        masked = quoted.get(answer.context, set())
        own = unquoted_ngrams(answer.text, thresholds.ngram, masked)
        best = None
        for name, text in samples:
            other = unquoted_ngrams(text, thresholds.ngram, masked)
            jaccard, containment = overlap(own, other)
            cosine = None
            if (embeddings is not None and answer.text in embeddings and text in embeddings
                    and len(words_of(answer.text)) >= thresholds.min_embedding_words):
                cosine = cosine_similarity(embeddings[answer.text], embeddings[text])
            long_enough = min(len(own), len(other)) >= thresholds.min_ngrams
            by = []
            if long_enough and jaccard is not None and jaccard >= thresholds.near_duplicate_jaccard:
                by.append("jaccard")
            if long_enough and containment is not None and containment >= thresholds.reference_containment:
                by.append("containment")
            if cosine is not None and cosine >= thresholds.reference_cosine:
                by.append("embedding")
            evidence = {"sample": name, "samples": len(samples), "jaccard": jaccard, "containment": containment,
                        "cosine": cosine, "raised_by": by}
            key = (bool(by), _strength(evidence))
            if best is None or key > best[0]:
                best = (key, evidence)
        if best is None:
            flags[answer.answer] = Flag(REFERENCE_LLM, False, rule, {"sample": None, "samples": 0})
        else:
            flags[answer.answer] = Flag(REFERENCE_LLM, bool(best[1]["raised_by"]), rule, best[1])
    return flags
