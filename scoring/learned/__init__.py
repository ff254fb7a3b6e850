"""Learned evaluators trained on a study's own ratings (issue 41), beside ADEM.

Pure engines (no Django): an evaluator *kind* is a trainer behind one small interface
(`kinds.py`), trained and measured by one driver (`crossfit.py`) with ADEM's context-disjoint
k-fold splits (`scoring.adem.splits`), pooled out-of-fold predictions and early stopping on a
validation slice of each fold's training contexts.

Kinds: `cross-encoder` (all-MiniLM-L6-v2 fine-tuned end to end on context, [reference,]
response -> score) and `stacked` (a ridge regression over scores the dataset already has).
The modules that compute (torch, transformers, scikit-learn) are imported when a kind is first
asked for, so importing this package or the registry stays light.
"""
