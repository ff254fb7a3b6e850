"""Same data, same seed, same figures: seeded generators, a fixed thread count, deterministic kernels.

Float sums split over a different number of threads round differently, so the thread count is
part of the recipe: 1 by default, whatever the host has. On the shared 2-core machine one thread
trained the cross-encoder twice as fast as two (a batch of 16: 14 s against 33 s of wall time,
1.4 against 5.0 s of CPU, load average ~12): two threads spin at every barrier while the other
one waits for a core. A quiet host may pass threads=2 and gets its own, equally repeatable, figures. torch's
deterministic mode makes any kernel without a deterministic version raise instead of silently
varying; it is switched on only while a learned evaluator trains, then put back as it was.

Computing the reference-free features (MiniLM sentence vectors) runs on `feature_threads()`:
1, or `RATELAB_LEARNED_THREADS` on a host with cores to spare. Vectors from two threads differ
from one thread's by float rounding (~1e-7), far below the features' third decimal.
"""

import contextlib
import os
import random

import numpy as np
import torch

DEFAULT_THREADS = 1
THREADS_VARIABLE = "RATELAB_LEARNED_THREADS"


def feature_threads():
    """Threads for the reference-free features' encoding: the environment's setting, else 1."""
    value = os.environ.get(THREADS_VARIABLE, "").strip()
    if not value:
        return DEFAULT_THREADS
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{THREADS_VARIABLE} must be a whole number of threads, not {value!r}")
    return int(value)


@contextlib.contextmanager
def torch_threads(threads=DEFAULT_THREADS):
    """torch runs on `threads` threads inside the block (inference too: one thread shares a loaded host best)."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@contextlib.contextmanager
def deterministic(seed, *, threads=DEFAULT_THREADS):
    mode_before = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    seed_everything(seed)
    try:
        with torch_threads(threads):
            yield
    finally:
        torch.use_deterministic_algorithms(mode_before)


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)
