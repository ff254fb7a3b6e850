"""A simulated crowd with known workers, for the detector bench and the demo (pure, seeded).

Roles:
- careful: rate with a little noise, answer at random on a small share of items (`noise`, 0-0.3),
  type their replies (some on phones, some quoting the context with a short paste);
- careless: answer at random on most items (`noise` 0.4-0.9) and quickly;
- straight_liner: give (nearly) one rating to everything and always pick the left reply, very quickly;
- paster: rate like the careful but bring most replies from elsewhere, each by one of three methods
  (`paste_method`): the clipboard (then rewrite a share by hand), an auto-typer (key events at a set pace,
  a fifth of them slowed to a human pace to evade speed checks), or a script that sets the text;
- copier: rate like the careful but reply by editing another worker's earlier answer to the same context
  (a share of words changed, sometimes a sentence added), pasting it or typing it out.
`noise` is the probability that one of the worker's ratings or choices ignores the item: what the
competence estimates of MACE and Dawid-Skene should rank (straight-liners: 1). Every written answer
carries `truth`: how its text came about (pasted, auto_typed, injected, copied), for scoring the flags.
"""

from dataclasses import dataclass, field

import numpy as np

from annotation.quality.integrity import simulated_writing as writing
from annotation.quality.integrity.similarity import WrittenAnswer

ROLES = ("careful", "careless", "straight_liner", "paster", "copier")
SCALE = (1, 2, 3, 4, 5)


@dataclass(frozen=True)
class CrowdSpec:
    workers: dict = field(default_factory=lambda: {
        "careful": 48, "careless": 8, "straight_liner": 5, "paster": 12, "copier": 7})
    contexts: int = 60
    replies_per_worker: int = 10
    rating_items: int = 400
    ratings_per_worker: int = 50
    pairs: int = 300
    pairs_per_worker: int = 40
    phone_share: float = 0.25  # careful workers typing on a phone
    quote_share: float = 0.15  # typed answers that paste a short quote


@dataclass(frozen=True)
class SimulatedWorker:
    worker: str
    role: str
    noise: float
    paste_method: str | None = None
    phone: bool = False


@dataclass
class SimulatedStudy:
    workers: list
    replies: list  # dicts: answer, worker, context, text, telemetry, submitted_at, truth (set of names)
    ratings: list  # (worker, item, score)
    rating_seconds: dict  # worker -> [seconds per rating]
    item_quality: dict  # item -> latent quality on the 1-5 scale
    choices: list  # (worker, pair, chosen system "A" or "B")
    sides: dict  # worker -> ["left" / "right" per choice]
    pair_winner: dict  # pair -> the system with the higher latent quality

    def role_of(self, worker):
        return next(w.role for w in self.workers if w.worker == worker)

    def written_answers(self):
        return [WrittenAnswer(r["answer"], r["worker"], r["context"], r["text"], r["submitted_at"])
                for r in self.replies]


def _workers(spec, rng):
    roles = [role for role in ROLES for _ in range(spec.workers.get(role, 0))]
    roles = [roles[k] for k in rng.permutation(len(roles))]  # ids mixed, not in blocks of one role
    workers = []
    for number, role in enumerate(roles):
        noise = {"careless": rng.uniform(0.4, 0.9), "straight_liner": 1.0}.get(role, rng.uniform(0.0, 0.3))
        method = str(rng.choice(["clipboard", "clipboard", "auto_typer", "script"])) if role == "paster" else None
        phone = role == "careful" and rng.random() < spec.phone_share
        workers.append(SimulatedWorker(f"w{number:03d}", role, float(noise), method, bool(phone)))
    return workers


def _own_reply(worker, text, rng, spec):
    """Telemetry and truth of a reply the worker produced by their role's usual way."""
    length = len(text)
    if worker.role != "paster":
        quote = int(rng.integers(15, 40)) if rng.random() < spec.quote_share and length > 120 else 0
        return writing.typed(rng, length, phone=worker.phone, quoted_chars=quote), set()
    if worker.paste_method == "clipboard":
        return writing.pasted(rng, length, typed_share=rng.uniform(0.0, 0.6)), {"pasted"}
    if worker.paste_method == "auto_typer":
        slow = rng.random() < 0.2  # paced like a fast person: evades the speed check by design
        pace = rng.uniform(9, 13) if slow else rng.uniform(20, 60)
        return writing.auto_typed(rng, length, keys_per_second=pace), {"auto_typed"}
    return writing.injected(rng, length), {"injected"}


def _replies(workers, spec, rng, source):
    replies = []
    planned = []
    for worker in workers:
        for context in rng.choice(spec.contexts, size=spec.replies_per_worker, replace=False):
            # Copiers answer late (they need something to copy); everyone else within the first hour.
            when = rng.uniform(3_600, 7_200) if worker.role == "copier" else rng.uniform(0, 3_600)
            planned.append((float(when), worker, f"c{int(context):03d}"))
    planned.sort(key=lambda p: p[0])
    for when, worker, context in planned:
        earlier = [r for r in replies if r["context"] == context and r["worker"] != worker.worker
                   and "copied" not in r["truth"]]
        if worker.role == "copier" and earlier and rng.random() < 0.85:
            original = earlier[int(rng.integers(len(earlier)))]
            text = source.edited_copy(original["text"], rng.uniform(0.05, 0.3), rng.random() < 0.3)
            if rng.random() < 0.5:
                telemetry, truth = writing.pasted(rng, len(text), typed_share=rng.uniform(0.0, 0.2)), {"pasted"}
            else:
                telemetry, truth = writing.typed(rng, len(text)), set()
            truth = truth | {"copied"}
        else:
            # LLM replies run longer than people's.
            text = source.answer(int(rng.integers(3, 7)) if worker.role == "paster" else int(rng.integers(1, 4)))
            telemetry, truth = _own_reply(worker, text, rng, spec)
        replies.append({"answer": f"r{len(replies):04d}", "worker": worker.worker, "context": context,
                        "text": text, "telemetry": telemetry, "submitted_at": when, "truth": truth})
    return replies


def _pace(worker, rng):
    """Median seconds per rating: careful 12-30 s, careless 3-7 s, straight-liners 2-4 s."""
    return {"careless": rng.uniform(3, 7), "straight_liner": rng.uniform(2, 4)}.get(worker.role, rng.uniform(12, 30))


def _ratings(workers, spec, rng):
    quality = {f"i{k:03d}": float(q) for k, q in enumerate(rng.uniform(1, 5, spec.rating_items))}
    items = list(quality)
    ratings, seconds = [], {}
    for worker in workers:
        favourite = int(rng.choice([3, 4, 5]))
        pace = _pace(worker, rng)
        seconds[worker.worker] = [float(pace * np.exp(rng.normal(0, 0.35))) for _ in range(spec.ratings_per_worker)]
        for item in rng.choice(items, size=spec.ratings_per_worker, replace=False):
            if worker.role == "straight_liner":
                score = favourite if rng.random() > 0.05 else int(rng.choice(SCALE))
            elif rng.random() < worker.noise:
                score = int(rng.choice(SCALE))
            else:
                score = int(np.clip(np.rint(quality[item] + rng.normal(0, 0.6)), 1, 5))
            ratings.append((worker.worker, str(item), score))
    return quality, ratings, seconds


def _choices(workers, spec, rng):
    gaps = rng.normal(0, 1.2, spec.pairs)  # latent quality of A minus B
    winner = {f"p{k:03d}": ("A" if g > 0 else "B") for k, g in enumerate(gaps)}
    choices, sides = [], {}
    for worker in workers:
        sides[worker.worker] = []
        for k in rng.choice(spec.pairs, size=spec.pairs_per_worker, replace=False):
            pair = f"p{int(k):03d}"
            a_on_left = rng.random() < 0.5
            if worker.role == "straight_liner":
                side = "left"
            elif rng.random() < worker.noise:
                side = "left" if rng.random() < 0.5 else "right"
            else:
                # A careful choice follows the latent gap; a close pair is a genuine coin toss.
                picks_a = rng.random() < 1 / (1 + np.exp(-4 * gaps[k]))
                side = "left" if picks_a == a_on_left else "right"
            chosen = "A" if (side == "left") == a_on_left else "B"
            choices.append((worker.worker, pair, chosen))
            sides[worker.worker].append(side)
    return choices, sides, winner


def simulate_crowd(spec=None, *, seed=0):
    """A whole simulated study; the same seed gives the same study."""
    spec = spec or CrowdSpec()
    rng = np.random.default_rng(seed)
    workers = _workers(spec, rng)
    replies = _replies(workers, spec, rng, writing.TextSource(rng))
    quality, ratings, seconds = _ratings(workers, spec, rng)
    choices, sides, winner = _choices(workers, spec, rng)
    return SimulatedStudy(workers=workers, replies=replies, ratings=ratings, rating_seconds=seconds,
                          item_quality=quality, choices=choices, sides=sides, pair_winner=winner)
