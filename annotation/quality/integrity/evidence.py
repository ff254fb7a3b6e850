"""What a detector returns: a flag name, whether it is raised, the rule it applied and the numbers."""

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Flag:
    name: str
    raised: bool
    rule: str  # the comparison made, in words, e.g. "pasted share ≥ 0.5"
    evidence: dict = field(default_factory=dict)  # plain numbers (and ids), ready for JSON

    def as_dict(self):
        return asdict(self)


def share(part, whole):
    """part / whole, or None when there is no whole (never NaN, so evidence stays JSON)."""
    return part / whole if whole else None
