"""ADEM (Lowe et al. 2017): a learned evaluator of dialogue responses.

Pure torch/numpy: nothing here imports Django, so the whole model, its training loop, the
encoders and the experiments are tested without a database. The Django side (registry rows,
services, commands, pages) lives in scoring/models/adem.py and scoring/services/adem*.py.

The modules that build or run a model (torch, tokenizers, matplotlib) are attached lazily with
lazy_loader (SPEC 1): after `from scoring import adem`, `adem.pipeline.fit(...)` imports
`scoring.adem.pipeline` at that first attribute access, so the services, views and tasks that reach
them load without torch (docs/metrics.md, "Start-up"). Light modules (`choices`, `checkpoint`,
`cache`, `encoders`) are imported as usual.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__, submodules={"experiments", "pipeline", "plots", "training"}
)
