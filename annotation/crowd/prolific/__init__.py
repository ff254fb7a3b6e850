"""Prolific: the provider (`provider`), the study it publishes (`study`), its HTTP client (`api`, the only
code that talks to Prolific), pay, bonuses, codes, submissions, review, block lists and Celery tasks.

Nothing is imported here: each module is imported by its own path.
"""
