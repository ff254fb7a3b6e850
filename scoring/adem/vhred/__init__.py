"""VHRED (Serban et al. 2017) pre-training, whose hierarchical encoder ADEM reuses.

`model` and `pretrain` (torch, tokenizers) are attached lazily, as in scoring/adem/__init__.py.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submodules={"model", "pretrain"})
