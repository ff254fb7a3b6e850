"""LLM judges at work: registering a judge and its endpoint rules, judging responses and pairs, removal.
The endpoint client and prompts are scoring.judges."""
