"""Quality control: agreement statistics, attention checks and rater exclusion."""
