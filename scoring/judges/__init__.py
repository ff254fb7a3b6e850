"""LLM judges: prompt templates, reply parsing and a concurrent OpenAI-compatible client.

Pure engine (no Django): `prompts` renders versioned templates and hashes them, `parsing` turns
a reply into a score or None, `client` sends prompts to a chat-completions endpoint, `pairwise`
judges pairs in both orders and summarises the verdicts.
"""
