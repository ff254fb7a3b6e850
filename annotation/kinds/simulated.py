"""The simulated annotator's noise model, shared by the kinds' demo answers (annotation.services.demo_data.simulation
drives them through the real claim and submit path).

Noise model. A diligent annotator scores a response round(1 + 4*q + noise), clipped to the scale,
where q in [0, 1] is the response's latent quality: `meta["demo_quality"]` when the demo data sets
it, otherwise a stable hash of the response's text (so repeated runs agree), and noise ~ N(0, 0.6)
plus a per-annotator bias ~ N(0, 0.3). Diligent annotators pass attention checks and take 3-12 s
per item. In a pairwise survey they choose as `kinds.pairwise.simulation` says; a context's
reference shown as a side (the reference pseudo-system's response, `meta["reference_id"]`) has
quality REFERENCE_QUALITY: a human-written reply, better than most systems'.
A careless annotator answers uniformly at random in under 1.5 s per item, so it fails
most instructed checks and shows up in agreement and timing statistics.
Two more roles exercise the integrity flags (issue 40): a straight-liner gives every item the same
score (the scale's upper middle; in a pairwise survey it always picks the left reply), at an
unhurried 2-5 s per item so only the integrity flags and agreement catch it; a paster's written
replies arrive from the clipboard (the writing kind's telemetry says so), a careful writer's are typed.
"""

import hashlib

from annotation.models import HITItem

NOISE_SD = 0.6
BIAS_SD = 0.3
REFERENCE_QUALITY = 0.8


def latent_quality(response):
    meta = response.meta or {}
    if "reference_id" in meta and "demo_quality" not in meta:
        return REFERENCE_QUALITY
    quality = meta.get("demo_quality")
    if isinstance(quality, (int, float)):
        return min(max(float(quality), 0.0), 1.0)
    digest = hashlib.sha256(response.text.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") / 2**32


CAREFUL, CARELESS, STRAIGHT_LINER, PASTER = "careful", "careless", "straight_liner", "paster"
ROLES = (CAREFUL, CARELESS, STRAIGHT_LINER, PASTER)


class SimulatedAnnotator:
    def __init__(self, worker_id, careless, rng, role=None):
        self.worker_id = worker_id
        self.role = role or (CARELESS if careless else CAREFUL)
        if self.role not in ROLES:
            raise ValueError(f"a simulated annotator's role is one of {ROLES}")
        self.careless = self.role == CARELESS
        self.rng = rng
        self.bias = rng.gauss(0, BIAS_SD)

    def seconds(self, low=3, high=12):
        """Seconds on one item: careless under 1.5 s, a straight-liner 2-5 s, others `low`-`high`."""
        if self.careless:
            return self.rng.uniform(0.3, 1.5)
        if self.role == STRAIGHT_LINER:
            return self.rng.uniform(2, 5)
        return self.rng.uniform(low, high)

    def score(self, item, aspect):
        low, high = aspect.scale_min, aspect.scale_max
        if self.role == STRAIGHT_LINER:
            return min(high, low + (high - low + 1) // 2 + 1)  # 4 on 1-5: the same answer, whatever is asked
        if self.careless:
            return self.rng.randint(low, high)
        if item.kind == HITItem.Kind.INSTRUCTED:
            return item.instructed_score
        if item.kind == HITItem.Kind.GOLD:
            return item.attention_check.accepted_scores[0]
        value = low + (high - low) * latent_quality(item.response) + self.bias + self.rng.gauss(0, NOISE_SD)
        return min(max(round(value), low), high)
