"""Sentence vectors of responses and contexts, and the cosines between them.

The encoder is ADEM's all-MiniLM-L6-v2 (`scoring.adem.encoders.minilm`). By default (`auto`, as
ADEM's standard precision) its matrix products run in bfloat16 where the CPU multiplies it
natively and in float32 elsewhere: on the 2-core AMD EPYC (AVX512-BF16) that encodes 1.75x
faster than float32, with vectors within 1e-4 cosine of float32's, so both share one encoder id.
`float32` asks for the model's own vectors on every machine. `int8` (ONNX Runtime, ADEM's int8
route) is the fastest: its vectors are about 0.99 cosine to float32's, so they carry their own
encoder id and a model fitted on them is scored with them only. A text's vector moves with the
batch it is encoded in (other texts, padding): by ~1e-7 in float32, ~1e-5 cosine in bfloat16
(~9e-4 a component) and up to ~0.05 cosine in int8 (300 Chit-Chat texts alone and batched).

A context is its last turns joined (`flatten_context`), as ADEM reads it; the last turn alone is
encoded too, because a response answers it first.

Vectors are kept in a bounded in-process memo keyed by text: cross-validation asks for the same
texts once per fold, and a worker scoring a dataset meets each context once per response.
"""

import threading
from collections import OrderedDict

import numpy as np

from scoring.adem.encoders.flat import flatten_context
from scoring.adem.encoders.minilm import MiniLmEncoder
from scoring.learned.determinism import feature_threads, torch_threads
from scoring.learned.reference_free import DEFAULT_PRECISION, check_precision

MEMO_SIZE = 50_000  # texts; 384 float32 each, so at most ~77 MB
_MEMO = OrderedDict()
_MEMO_LOCK = threading.Lock()  # the scoring API may run in several threads of one process
_ENCODERS = {}


def encoder(precision=DEFAULT_PRECISION):
    if check_precision(precision) not in _ENCODERS:
        _ENCODERS[precision] = MiniLmEncoder(device="cpu", precision=precision)
    return _ENCODERS[precision]


def vectors(texts, *, encode=None, precision=DEFAULT_PRECISION):
    """One unit vector per text, rows of an (n, dim) float32 array; `encode(texts) -> array` for tests."""
    encode = encode or encoder(precision).encode_texts
    wanted = list(texts)
    # The memo keeps each precision's vectors apart (int8 and float32 vectors of a text differ), by
    # the precision the encoder runs in: `auto` is float32 on a CPU without native bfloat16.
    ran_as = encoder(precision).precision
    keys = {t: (ran_as, t) for t in set(wanted)}
    # Taken out of the memo first: adding this call's new texts may push older ones out of it.
    with _MEMO_LOCK:
        found = {t: _MEMO[key] for t, key in keys.items() if key in _MEMO}
    missing = sorted(set(wanted) - set(found))
    if missing:
        with torch_threads(feature_threads()):
            found.update(zip(missing, np.asarray(encode(missing), dtype=np.float32), strict=True))
        with _MEMO_LOCK:
            for text in missing:
                _MEMO[keys[text]] = found[text]
                while len(_MEMO) > MEMO_SIZE:
                    _MEMO.popitem(last=False)
    return np.stack([found[t] for t in wanted])


def forget():
    with _MEMO_LOCK:
        _MEMO.clear()


def pair_vectors(responses, *, encode=None, precision=DEFAULT_PRECISION):
    """(response, last turn, recent context) vectors, each an (n, dim) array."""
    answers = [r.response for r in responses]
    lasts = [r.context[-1] if r.context else "" for r in responses]
    contexts = [flatten_context(list(r.context)) for r in responses]
    found = vectors(answers + lasts + contexts, encode=encode, precision=precision)
    n = len(responses)
    return found[:n], found[n : 2 * n], found[2 * n :]


def cosine_features(response_vectors, last_vectors, context_vectors):
    """{name: array}: the response's cosine to its last turn and to its recent context."""
    return {
        "rf:cosine_last": np.sum(response_vectors * last_vectors, axis=1),
        "rf:cosine_context": np.sum(response_vectors * context_vectors, axis=1),
    }
