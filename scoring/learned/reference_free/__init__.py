"""Reference-free features of a (context, response) pair, for the stacked evaluator (issue 41).

The learned metrics that lead the published comparisons (Yeh et al. 2021) score a response
without its reference: USL-H by whether it is a valid utterance and a likely next utterance,
DEB by next-utterance prediction learned from dialogues with random negatives. These modules
compute the same kinds of signals from what RateLab already ships, none of them fitted to a
study's ratings (so computing them over every row leaks no test fold):

- `surface.py`: length, distinct-n, repetition of the context, questions (plain Python);
- `semantic.py`: cosines of all-MiniLM-L6-v2 sentence vectors between the response and the
  last turn / the whole context (the model was trained on a billion pairs that include Reddit
  comment-reply pairs, so the cosine is a zero-shot next-utterance signal);
- `next_utterance.py`: a logistic next-utterance head on frozen MiniLM vectors, trained on the
  packaged Chit-Chat corpus with random negatives and cached on disk;
- `features.py`: all of them as one `{name: value}` dict per response, names prefixed `rf:`.
"""

# The sentence vectors' precision, a model's choice (torch-free here, so configs are checked
# without loading the encoder):
# - auto: ADEM's standard, the matrix products in bfloat16 where the CPU multiplies it natively
#   (AVX512-BF16 or AMX), float32 elsewhere. Its vectors are within 1e-4 cosine of float32's and
#   move with their batch by ~1e-5 cosine at most, so they share float32's encoder id and heads;
# - float32: the model's own vectors, the same on every machine to float rounding;
# - int8: ONNX Runtime's, the fastest, ~0.99 cosine to float32 and moving slightly with the batch.
PRECISIONS = ("auto", "float32", "int8")
DEFAULT_PRECISION = "auto"
# What a model saved before precisions were a choice was fitted on.
LEGACY_PRECISION = "float32"


def check_precision(precision):
    if precision not in PRECISIONS:
        raise ValueError(f"feature_precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
    return precision
