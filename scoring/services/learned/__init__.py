"""Learned evaluators (scoring.learned: cross-encoder, stacked) served like ADEM (issue 41).

They live in ADEM's registry (`AdemModel` with a `kind` other than "adem"), with its ownership,
training runs, progress page and scoring API; their scores are the metric `learned:<name>`.
"""
