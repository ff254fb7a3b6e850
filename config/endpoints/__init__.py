"""Requests to researchers' OpenAI-compatible endpoints, below the apps that make them.

LLM judges (scoring) and live chat systems (annotation) both call a researcher-given base URL, so
both go through here: `addresses` (where a request may go: no link-local, private only by opt-in, one
resolution pinned), `rules` (the operator's host list and key-variable assignments, read from settings),
`client` (one request through the `openai` SDK, failures with a kind and never a foreign body) and
`session` (one request at a time on clients kept between requests, for chat turns). All but `rules`
import no Django.
"""
