"""Conversations of a dataset: reading them for pages and exports, and converting public corpora.

Parsing and importing live beside the other imports (annotation/importing/conversations.py,
annotation/services/conversations.py and conversation_answers.py); the models in
annotation/models/conversations.py.
"""
