"""The effort rule of a live chat survey (issue 38, quality): pure, no Django.

Each chat is judged on its annotator messages:
- `short`: messages of fewer than `SHORT_WORDS` words ("ok", "yes sure"), as a share of its messages;
- `pasted`: messages mostly pasted (at least `MOSTLY_PASTED` of their characters came by paste or
  drop, as the page measured), as a share of the messages the page measured (`telemetry`);
- `idle`: the longest gap without typing while a message was being written (from the moment the
  box could take it, or the last key, to the next key or Send), over the measured messages.
A chat passing a threshold the survey sets is left out of analysis, with the measure and the
threshold as its reason; a threshold of None switches that part off, and a chat without measured
messages is not judged on paste or idle time. Evidence, not proof: the quality page shows every
chat's figures, so a researcher reads the chat before acting on the annotator.
"""

from dataclasses import dataclass

SHORT_WORDS = 3
MOSTLY_PASTED = 0.5


@dataclass(frozen=True)
class EffortRules:
    max_short_share: float | None = None
    max_pasted_share: float | None = None
    max_idle_seconds: float | None = None

    @property
    def on(self):
        return any(v is not None for v in (self.max_short_share, self.max_pasted_share, self.max_idle_seconds))


def word_count(text):
    return len(str(text).split())


def mostly_pasted(text, pasted_chars):
    """Whether at least half of the message came by paste (a paste trimmed afterwards counts whole)."""
    length = len(str(text).strip())
    return bool(length) and pasted_chars >= MOSTLY_PASTED * length


def chat_effort(messages):
    """The figures of one chat from its annotator messages, each `(text, telemetry or None)` where
    telemetry is `{"pasted_chars": n, "idle_ms": n}`."""
    measured = [(text, t) for text, t in messages if t is not None]
    idle = [t["idle_ms"] / 1000 for _, t in measured if t.get("idle_ms") is not None]
    return {
        "messages": len(messages),
        "short": sum(word_count(text) < SHORT_WORDS for text, _ in messages),
        "measured": len(measured),
        "pasted": sum(mostly_pasted(text, t.get("pasted_chars") or 0) for text, t in measured),
        "longest_idle_seconds": max(idle) if idle else None,
    }


def _share(part, whole):
    return part / whole if whole else None


def effort_reasons(effort, rules):
    """Why `effort` (`chat_effort`'s figures) leaves the chat out under `rules`: a list of
    `{"rule", "detail", "value", "threshold"}`, empty when it is kept."""
    reasons = []
    short = _share(effort["short"], effort["messages"])
    if rules.max_short_share is not None and short is not None and short > rules.max_short_share:
        reasons.append({
            "rule": "short",
            "detail": f"{effort['short']} of {effort['messages']} messages under {SHORT_WORDS} words ({short:.0%}),"
                      f" above {rules.max_short_share:g}",
            "value": short,
            "threshold": rules.max_short_share,
        })  # fmt: skip
    pasted = _share(effort["pasted"], effort["measured"])
    if rules.max_pasted_share is not None and pasted is not None and pasted > rules.max_pasted_share:
        reasons.append({
            "rule": "pasted",
            "detail": f"{effort['pasted']} of {effort['measured']} measured messages mostly pasted ({pasted:.0%}),"
                      f" above {rules.max_pasted_share:g}",
            "value": pasted,
            "threshold": rules.max_pasted_share,
        })  # fmt: skip
    idle = effort["longest_idle_seconds"]
    if rules.max_idle_seconds is not None and idle is not None and idle > rules.max_idle_seconds:
        reasons.append({
            "rule": "idle",
            "detail": f"{idle:.0f} s without typing while writing a message, above {rules.max_idle_seconds:g} s",
            "value": idle,
            "threshold": rules.max_idle_seconds,
        })  # fmt: skip
    return reasons
