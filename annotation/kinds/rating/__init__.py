"""Rating tasks: every shown reply judged on each question's scale, with gold and instructed checks."""
