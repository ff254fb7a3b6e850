"""The names a form, a command or a service checks a request against, without loading the model code.

`model.py` and `experiments.py` import torch (through the training loop); pages and commands that
only offer or validate these names must not pay for it at start-up.
"""

VARIANTS = ("full", "context", "reference")  # ADEM's scoring function, see model.Adem
KINDS = ("leave-one-system-out", "data-efficiency")  # the experiments experiments.run knows
