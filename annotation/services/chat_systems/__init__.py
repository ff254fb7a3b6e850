"""Chat systems: dialogue systems behind OpenAI-compatible endpoints that annotators chat with (issue 38).

`registry` adds, changes and removes a researcher's systems under the operator's host and key rules
(config.endpoints.rules, the judges' own); `replies` asks a system for its next turn (`chat_reply`,
what the live chat kind calls); `demo_bot` is a small retrieval bot speaking the same protocol on
127.0.0.1, for the demo and for trying RateLab without a model.
"""
