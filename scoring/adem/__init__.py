"""ADEM (Lowe et al. 2017): a learned evaluator of dialogue responses.

Pure torch/numpy: nothing here imports Django, so the whole model, its training loop, the
encoders and the experiments are tested without a database. The Django side (registry rows,
services, commands, pages) lives in scoring/models/adem.py and scoring/services_adem.py.
"""
