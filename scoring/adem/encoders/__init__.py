"""Text encoders for ADEM: `glove` (averaged GloVe), `minilm` (sentence encoder), `vhred`.

Every encoder has `id` (names its weights, so cached vectors never mix encoders), `dim`,
`encode_texts(list[str])` and `encode_contexts(list[list[str]])`, both returning float32
arrays with one row per item.

Encoder modules are imported when first asked for: importing transformers costs seconds,
and every web process and management command would otherwise pay it at start-up.
"""

from importlib import import_module

ENCODERS = ("vhred", "minilm", "glove")
_CLASSES = {
    "glove": ("scoring.adem.encoders.glove", "GloveEncoder"),
    "minilm": ("scoring.adem.encoders.minilm", "MiniLmEncoder"),
    "vhred": ("scoring.adem.vhred.encoder", "VhredEncoder"),
}


def encoder_class(name):
    if name not in _CLASSES:
        raise ValueError(f"unknown encoder {name!r}; expected one of {', '.join(ENCODERS)}")
    module, attribute = _CLASSES[name]
    return getattr(import_module(module), attribute)


def get_encoder(name, *, vhred_checkpoint=None, device=None, precision="auto", export_dir=None):
    """An encoder by name. `precision` other than "auto" is MiniLM's alone (see minilm.py);
    `export_dir` is where MiniLM's int8 ONNX export is kept."""
    cls = encoder_class(name)
    if name != "minilm" and precision != "auto":
        raise ValueError(f"precision {precision!r} is offered for the minilm encoder only, not {name}")
    if name == "glove":
        return cls()
    if name == "vhred":
        if vhred_checkpoint is None:
            raise ValueError("the vhred encoder needs a pre-trained VHRED checkpoint: run pretrain_vhred first")
        return cls(vhred_checkpoint, device=device)
    return cls(device=device, precision=precision, export_dir=export_dir)
