"""Tokenisers and the stop-word filter shared by several metrics.

Word-overlap metrics keep their reference implementations' own tokenisation (BLEU, CIDEr:
`str.split()`; ROUGE-L: `str.split(" ")`; METEOR: the jar's `-norm`). The embedding metrics follow
nlg-eval, which runs `nltk.word_tokenize` (Punkt + Treebank); Punkt needs downloaded data, so
`words` is a Treebank-style regular expression that agrees with it on ordinary dialogue text:
punctuation split off, "n't" and the clitics 's 'm 're 've 'll 'd separated, case kept.
"""

import re
import string
from functools import cache

import stop_words

_WORDS = re.compile(
    r"\w+?(?=n't\b)|n't\b|'(?:s|m|re|ve|ll|d)\b|\w+(?:[-.]\w+)*|\.\.\.|``|''|[^\w\s]",
    re.IGNORECASE,
)
# for stop-word removal contractions stay whole: the list holds "don't", "it's", ...
_WORDS_WHOLE = re.compile(r"\w+(?:['’.-]\w+)*|[^\w\s]")
PUNCTUATION = frozenset(string.punctuation) | {"...", "``", "''", "“", "”", "‘", "’", "…"}


def words(text):
    """Treebank-style tokens of `text` (case kept)."""
    return _WORDS.findall(text)


@cache
def stopword_set():
    """The pinned English list of `stop-words==2018.7.23` (174 words), lower case."""
    return frozenset(w.lower() for w in stop_words.get_stop_words("en"))


def is_content(token):
    return token.lower() not in stopword_set() and not all(ch in PUNCTUATION for ch in token)


def strip_stopwords(text):
    """`text` without stop words and punctuation tokens, re-joined with single spaces.

    Used by the `*_nostop` variants (Liu et al. 2016, Table 4): the base metric then runs on
    the result with its own tokeniser.
    """
    return " ".join(t for t in _WORDS_WHOLE.findall(text) if is_content(t.replace("’", "'")))
