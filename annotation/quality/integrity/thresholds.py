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
    # With sentence embeddings (e.g. MiniLM) supplied from outside the pure package: cosine similarity.
    embedding_cosine: float = 0.92
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


DEFAULTS = Thresholds()
