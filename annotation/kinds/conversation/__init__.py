"""The conversation kind: whole conversations rated, and their system turns flagged or rated (issue 37)."""
