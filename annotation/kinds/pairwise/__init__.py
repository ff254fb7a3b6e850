"""Pairwise tasks: two replies to one conversation, the annotator says which is better (or a tie)."""
