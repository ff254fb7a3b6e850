"""Random dialogue-like text for the metric tests and the benchmark's shape."""

import random

VOCAB = (  # noqa: SIM905  (one readable string rather than 65 quoted words)
    "the a an i you we it is was are do don't not to of and in on at for with my your that this what how "
    "cat dog mat sat hello hi yes no sure thanks really love like good great movie music weekend pizza "
    "Hello I'm You The über café naïve São Paulo 東京 😀 🎉 ! ? , . ... ' \""
).split()


def sentence(rng, low=0, high=25):
    return " ".join(rng.choice(VOCAB) for _ in range(rng.randint(low, high)))


def random_pairs(n, seed, *, max_refs=3, long_every=50):
    """`(hyps, refs)`: n responses with 1..max_refs references; every `long_every`-th one is long."""
    rng = random.Random(seed)
    hyps, refs = [], []
    for i in range(n):
        high = 90 if i % long_every == 0 else 25
        hyps.append(sentence(rng, 0, high))
        refs.append([sentence(rng, 1, high) for _ in range(rng.randint(1, max_refs))])
    return hyps, refs
