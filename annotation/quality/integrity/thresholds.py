"""Every default the integrity detectors compare against, in one place, with why it is where it is.

A flag is raised when its evidence crosses one of these; a survey may pass its own `Thresholds`. They
are deliberately conservative: a flag sends a researcher to read an answer, it does not convict a worker.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Thresholds:
    # --- written answers -------------------------------------------------------------------------
    # Answers shorter than this are not judged on their telemetry: a 10-character reply pasted from a
    # note says little, and shares of tiny numbers swing wildly.
    min_chars: int = 20
    # "Mostly pasted": at least this share of the final text arrived by paste events.
    pasted_share: float = 0.5
    # "Typed faster than humanly plausible": character keys per second of active typing. Dhakal et al.
    # (CHI 2018, 136 million keystrokes from about 168,000 volunteers) found a mean of 52 words per
    # minute, with the fastest few percent near 120; 15 keys/s is 180 wpm at 5 keys a word, 1.5 times
    # those fastest volunteers and in the range of world-record bursts, so a sustained rate above it
    # over `min_keystrokes_for_speed` keys points at injected key events (auto-typers), not at a person.
    max_keys_per_second: float = 15.0
    min_keystrokes_for_speed: int = 40
    # "Length far beyond what was typed": final length ≥ this many times the characters that keys and
    # pastes can explain, and at least `unexplained_min_chars` more. The margin leaves room for phone
    # keyboards whose word suggestions insert several characters for one tap.
    unexplained_ratio: float = 1.5
    unexplained_min_chars: int = 30
    # "Near-duplicate of another worker's answer": word n-grams of this length; raised at or above
    # either the containment (shared n-grams / those of the shorter answer: catches a copy with a sentence
    # added) or the Jaccard similarity (shared / all). Independent replies to one context share almost no
    # word trigrams once the context's own words are left out (a quote of the question is not a copy).
    # Jaccard 0.12 is about what a copy keeps after 40% of its words are changed ((3/5)^3 ≈ 0.22 of its
    # trigrams survive: 0.22 / 1.78 ≈ 0.12). Set on simulated studies (seeds 0-4, where independent
    # replies reached Jaccard 0.095 and containment 0.2 at most); the bench reports other seeds. Real
    # English shares more stock phrases ("I think that") than the simulator's text, hence `min_ngrams`:
    # short answers are left to the embedding hook, unless they are the very same words.
    ngram: int = 3
    near_duplicate_containment: float = 0.4
    near_duplicate_jaccard: float = 0.12
    min_ngrams: int = 5  # fewer trigrams than this (about 7 words): too short to call a copy by n-grams
    min_identical_words: int = 5  # the same words in the same order, at least this many: a copy
    # With sentence embeddings (MiniLM, all-MiniLM-L6-v2, mean-pooled) supplied from outside the pure
    # package: cosine similarity. On the crafted replies of tests/annotation/quality/test_integrity_embeddings.py
    # (one context, people's independent replies, paraphrased copies of them, LLM samples), paraphrased
    # copies reached 0.91-0.95 with their originals, independent replies at most 0.54 with each other
    # and 0.51 with a copy of another; 0.85 sits between, nearer the copies. A copy reworded heavily
    # falls to 0.70-0.76 and is missed: so would two people giving the same advice sit there, and this
    # flag must not call them copies. Short replies ("thanks a lot" / "thank you so much") are alike by meaning
    # without being copies: below `min_embedding_words` words the cosine is not compared.
    embedding_cosine: float = 0.85
    min_embedding_words: int = 8
    # "Like the reference LLM": the same n-gram rule as for copies, against the LLM's own samples for the
    # context. Two LLM samples for one context share more stock phrasing than two people do, and an
    # LLM-written reply is a fresh sample, not an edit of a stored one, so containment alone is set lower
    # than for copies... but not so low that a person's reply sharing a phrase with the LLM is flagged.
    reference_containment: float = 0.4
    # MiniLM cosine with the closest LLM sample: on the same crafted context a fresh sample of the LLM
    # reached 0.83 and 0.76 with two stored samples, people's own replies at most 0.62; 0.75 catches a
    # fresh sample through its closest of K samples (more samples, more chances) and leaves a margin over
    # the people. Set on one crafted context only: a researcher should read, not trust, this flag.
    reference_cosine: float = 0.75
    # --- ratings ---------------------------------------------------------------------------------
    min_ratings: int = 10  # fewer answers than this: no carelessness flag on a worker
    # Straight-lining: the most frequent answer makes up at least this share of a worker's ratings.
    straight_line_share: float = 0.9
    # Near-zero variance: standard deviation of a worker's ratings below this (scale units): nearly all
    # answers within one point, where careful raters of varied replies spread over 1 point or more.
    min_rating_sd: float = 0.5
    # One side always chosen in pairwise: share of decisive choices that went to one position.
    one_side_share: float = 0.9
    # Speed: a worker whose median seconds per answer is below this fraction of the crowd's median...
    too_fast_vs_crowd: float = 1 / 3
    # ... and single answers faster than this fraction of both the worker's own and the crowd's median.
    too_fast_vs_own: float = 1 / 4
    # Disagreement with consensus: robust z (median and MAD across workers) of how little a worker's
    # scores follow the other raters' mean. 3.5 is Iglewicz and Hoaglin's (1993) cut-off for modified
    # z-scores: only the far extremes.
    consensus_robust_z: float = 3.5
    # ... and the correlation at least this far below the crowd's median. When a few careful raters
    # agree closely (correlations 0.81, 0.79, 0.76), the MAD is tiny and a z of 5 or 9 means nothing:
    # seen on simulated four-rater studies, where one careful rater in six layouts was flagged at 0.03
    # below the median. A rater 0.3 below the crowd follows it visibly less well.
    consensus_min_gap: float = 0.3


DEFAULTS = Thresholds()
