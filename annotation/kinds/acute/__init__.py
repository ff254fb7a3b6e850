"""The ACUTE-Eval kind: two conversations of different systems compared side by side (issue 37)."""
