"""Simulated written answers and their telemetry, for `simulation` (pure, seeded by the caller's rng).

Text: sentences drawn from a made-up vocabulary with Zipf-distributed word frequencies, so that, as in
real replies, independent answers share common words and the odd common trigram but hardly any run of
content words. Telemetry: what the page script would record for each way an answer can come about —
typed on a keyboard or a phone (word suggestions insert characters without keys), pasted from the
clipboard, typed by an auto-typer (injected key events), or inserted by a script with no event at all.
"""

import numpy as np

SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]
VOCABULARY_SIZE = 4000
ZIPF_EXPONENT = 1.05
WORDS_PER_SENTENCE = (6, 16)
# Typing speed of people, words per minute at 5 keys a word: log-normal around 45 wpm, as in Dhakal
# et al.'s (CHI 2018) large sample (mean 52, most between 30 and 80), capped at a very fast 130.
HUMAN_WPM_MEDIAN, HUMAN_WPM_LOG_SD, HUMAN_WPM_CAP = 45.0, 0.3, 130.0


class TextSource:
    """Draws words and sentences; one per study so all workers share the vocabulary."""

    def __init__(self, rng):
        self.rng = rng
        words = set()
        while len(words) < VOCABULARY_SIZE:
            words.add("".join(rng.choice(SYLLABLES, size=rng.integers(1, 4))))
        self.words = np.array(sorted(words))
        rng.shuffle(self.words)
        weights = 1.0 / np.arange(1, VOCABULARY_SIZE + 1) ** ZIPF_EXPONENT
        self.weights = weights / weights.sum()

    def sentence(self):
        n = int(self.rng.integers(*WORDS_PER_SENTENCE))
        words = self.rng.choice(self.words, size=n, p=self.weights)
        return " ".join(words).capitalize() + "."

    def answer(self, sentences):
        return " ".join(self.sentence() for _ in range(sentences))

    def edited_copy(self, text, replace_share, add_sentence):
        """A copy with a share of its words swapped for others (and maybe a sentence of its own)."""
        words = text.split(" ")
        for k in np.flatnonzero(self.rng.random(len(words)) < replace_share):
            words[k] = str(self.rng.choice(self.words, p=self.weights))
        copied = " ".join(words)
        return f"{copied} {self.sentence()}" if add_sentence else copied


def _human_keys_per_second(rng):
    wpm = min(HUMAN_WPM_CAP, HUMAN_WPM_MEDIAN * float(np.exp(rng.normal(0, HUMAN_WPM_LOG_SD))))
    return wpm * 5 / 60


def typed(rng, length, *, phone=False, quoted_chars=0, keys_per_second=None):
    """Typed by a person. Corrections cost keys (3-20% of the text is retyped); on a phone, suggestions
    insert about a third of the characters without a key each. `quoted_chars`: a short paste (a quote of
    the context) inside an otherwise typed answer."""
    own = length - quoted_chars
    retyped = int(own * rng.uniform(0.03, 0.2))
    typed_chars = own + retyped
    keystrokes = int(typed_chars * rng.uniform(0.55, 0.8)) if phone else typed_chars
    speed = keys_per_second or _human_keys_per_second(rng)
    return {
        "first_key_ms": int(rng.uniform(2_000, 25_000)),
        "active_typing_ms": int(keystrokes / speed * 1000),
        "keystrokes": keystrokes,
        "typed_chars": typed_chars,
        "deletions": retyped,
        "final_length": length,
        "paste_events": int(quoted_chars > 0),
        "pasted_chars": quoted_chars,
        "inserted_chars": 0,  # a phone's suggestions insert single words, never several at once
        "focus_changes": int(rng.poisson(0.3)),
    }


def pasted(rng, length, *, typed_share):
    """Pasted from the clipboard (an LLM's reply, another worker's answer), then partly rewritten by hand:
    `typed_share` of the final text typed. The worker usually left the page to fetch the text."""
    typed_chars = int(length * typed_share)
    pasted_chars = length - typed_chars + int(rng.integers(0, 30))  # a little trimmed after pasting
    speed = _human_keys_per_second(rng)
    return {
        "first_key_ms": int(rng.uniform(15_000, 90_000)),
        "active_typing_ms": int(typed_chars / speed * 1000),
        "keystrokes": typed_chars,
        "typed_chars": typed_chars,
        "deletions": int(rng.integers(0, 10)),
        "final_length": length,
        "paste_events": int(rng.integers(1, 3)),
        "pasted_chars": pasted_chars,
        "inserted_chars": 0,  # the simulated pasters use the clipboard's paste, which the page announces
        "focus_changes": int(1 + rng.poisson(1.0)),
    }


def auto_typed(rng, length, *, keys_per_second):
    """Typed by a program sending one key event per character at a set pace: no corrections."""
    return {
        "first_key_ms": int(rng.uniform(10_000, 60_000)),
        "active_typing_ms": int(length / keys_per_second * 1000),
        "keystrokes": length,
        "typed_chars": length,
        "deletions": 0,
        "final_length": length,
        "paste_events": 0,
        "pasted_chars": 0,
        "inserted_chars": 0,
        "focus_changes": int(1 + rng.poisson(0.5)),
    }


def injected(rng, length):
    """Inserted by a script (an extension setting the field's value): a few stray keys, no paste event."""
    keys = int(rng.integers(0, 6))
    return {
        "first_key_ms": int(rng.uniform(10_000, 60_000)),
        "active_typing_ms": int(keys * 250),
        "keystrokes": keys,
        "typed_chars": keys,
        "deletions": int(rng.integers(0, 3)),
        "final_length": length,
        "paste_events": 0,
        "pasted_chars": 0,
        "inserted_chars": 0,
        "focus_changes": int(1 + rng.poisson(0.5)),
    }
