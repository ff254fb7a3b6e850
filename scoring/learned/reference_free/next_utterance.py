"""A next-utterance head: is this response the turn that followed this context in a real dialogue?

DEB's and USL-H's idea (learn next-utterance prediction from dialogues, with random responses as
negatives) at the cost a shared CPU allows: all-MiniLM-L6-v2 stays frozen, and a logistic
regression reads [c * r, |c - r|, c, r] for a context vector c and a response vector r. The
dialogues are the packaged Chit-Chat corpus (human-human chat, nothing from any study), so the
head never sees a study's ratings; its logit is a feature the stacked kind may learn a weight for.

Two heads are trained: one reads the recent context (the last three turns), one the last turn.
Positives: `windows` (context, next turn) pairs drawn with a fixed seed; negatives: for each,
`negatives` turns of other windows. Training encodes each window's texts once (~3 texts a
window) and takes a few minutes on one core, so the heads are cached as a checkpoint on disk,
named by their settings and the encoder, and trained again only if the file is missing or
unreadable. Each encoder id has its own heads, trained on its own vectors: a head fitted on
float32 vectors would read int8 ones slightly off. `auto` shares float32's id (its bfloat16
vectors are within 1e-4 cosine), and that file is always trained on float32 vectors, so its
content does not depend on which precision asked for it first.
"""

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from scoring.adem import checkpoint
from scoring.adem.encoders.flat import flatten_context
from scoring.learned.reference_free import DEFAULT_PRECISION, semantic

CHECKPOINT_KIND = "learned-next-utterance-head"
SETTINGS = {"windows": 6000, "negatives": 2, "seed": 0, "penalty": 1.0, "corpus": "chitchat-dataset"}
VIEWS = ("context", "last")


def default_directory():
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ratelab" / "learned"


def pair_design(context_vectors, response_vectors):
    c, r = context_vectors, response_vectors
    return np.hstack([c * r, np.abs(c - r), c, r])


def sample_windows(dialogues, *, windows, seed):
    """`windows` (context turns, next turn) pairs, each a dialogue's turn with up to 3 turns before it."""
    rng = np.random.default_rng(seed)
    places = [(d, i) for d, turns in enumerate(dialogues) for i in range(1, len(turns))]
    chosen = rng.choice(len(places), size=min(windows, len(places)), replace=False)
    return [(dialogues[d][max(0, i - 3) : i], dialogues[d][i]) for d, i in (places[k] for k in sorted(chosen))]


def negative_partners(n, *, negatives, seed):
    """`negatives` arrays of partner indices: partner[j] != j, so a negative is never the true turn."""
    rng = np.random.default_rng(seed + 1)
    partners = []
    for _ in range(negatives):
        shift = rng.integers(1, n, size=n)  # a shift in 1..n-1 never lands back on j
        partners.append((np.arange(n) + shift) % n)
    return partners


def train_heads(dialogues, *, settings=SETTINGS, encode=None, precision=DEFAULT_PRECISION):
    """{view: (coefficients, intercept)} trained on `dialogues`; `encode` for tests."""
    from sklearn.linear_model import LogisticRegression  # the heads' fit only; scoring needs numpy

    pairs = sample_windows(dialogues, windows=settings["windows"], seed=settings["seed"])
    responses = semantic.vectors([r for _, r in pairs], encode=encode, precision=precision)
    views = {
        "context": semantic.vectors([flatten_context(c) for c, _ in pairs], encode=encode, precision=precision),
        "last": semantic.vectors([c[-1] for c, _ in pairs], encode=encode, precision=precision),
    }
    partners = negative_partners(len(pairs), negatives=settings["negatives"], seed=settings["seed"])
    heads = {}
    for view, contexts in views.items():
        x = np.vstack([pair_design(contexts, responses)] + [pair_design(contexts, responses[p]) for p in partners])
        y = np.concatenate([np.ones(len(pairs))] + [np.zeros(len(pairs))] * len(partners))
        model = LogisticRegression(C=settings["penalty"], max_iter=2000).fit(x, y)
        heads[view] = (model.coef_[0].astype(np.float64), float(model.intercept_[0]))
    return heads


def cache_path(directory, settings=SETTINGS, precision=DEFAULT_PRECISION):
    # Named by the encoder's id, so float32's file keeps the name it had before int8 existed.
    key = json.dumps({**settings, "encoder": semantic.encoder(precision).id}, sort_keys=True)
    return Path(directory) / f"next-utterance-{hashlib.sha256(key.encode()).hexdigest()[:16]}.ckpt"


def save_heads(path, heads, settings):
    tensors = {f"{view}_coefficients": coefficients for view, (coefficients, _) in heads.items()}
    config = {"settings": settings, "intercepts": {view: b for view, (_, b) in heads.items()}}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    checkpoint.save(path, kind=CHECKPOINT_KIND, config=config, tensors=tensors)


def load_heads(path):
    config, tensors = checkpoint.load(path, kind=CHECKPOINT_KIND)
    try:
        return {view: (tensors[f"{view}_coefficients"].numpy(), float(config["intercepts"][view])) for view in VIEWS}
    except (KeyError, TypeError, ValueError) as error:
        raise checkpoint.CheckpointError(f"{path} does not hold next-utterance heads ({error})") from error


_LOADED = {}


def training_precision(precision):
    """The vectors the heads for `precision` are trained on: float32's for every precision sharing its id."""
    same_id = semantic.encoder(precision).id == semantic.encoder("float32").id
    return "float32" if same_id else precision


def heads(directory=None, *, settings=SETTINGS, precision=DEFAULT_PRECISION):
    """The cached heads for vectors of `precision`, trained on the Chit-Chat corpus first if the cache has none."""
    path = cache_path(directory or default_directory(), settings, precision)
    if path not in _LOADED:
        try:
            _LOADED[path] = load_heads(path)
        except (checkpoint.CheckpointError, OSError):
            from scoring.adem.vhred.corpus import chitchat_dialogues

            trained = train_heads(chitchat_dialogues(), settings=settings, precision=training_precision(precision))
            save_heads(path, trained, settings)
            _LOADED[path] = trained
    return _LOADED[path]


def logits(heads_by_view, response_vectors, last_vectors, context_vectors):
    """{name: array}: each head's logit that the response is the turn that came next."""
    out = {}
    for view, contexts in (("context", context_vectors), ("last", last_vectors)):
        coefficients, intercept = heads_by_view[view]
        design = pair_design(contexts, response_vectors).astype(np.float64)
        out[f"rf:next_utterance_{view}"] = design @ coefficients + intercept
    return out
