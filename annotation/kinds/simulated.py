"""The simulated annotator's noise model, shared by the kinds' demo answers (annotation.demo.simulation
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


class SimulatedAnnotator:
    def __init__(self, worker_id, careless, rng):
        self.worker_id = worker_id
        self.careless = careless
        self.rng = rng
        self.bias = rng.gauss(0, BIAS_SD)

    def score(self, item, aspect):
        low, high = aspect.scale_min, aspect.scale_max
        if self.careless:
            return self.rng.randint(low, high)
        if item.kind == HITItem.Kind.INSTRUCTED:
            return item.instructed_score
        if item.kind == HITItem.Kind.GOLD:
            return item.attention_check.accepted_scores[0]
        value = low + (high - low) * latent_quality(item.response) + self.bias + self.rng.gauss(0, NOISE_SD)
        return min(max(round(value), low), high)
