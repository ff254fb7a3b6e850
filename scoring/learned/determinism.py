"""Same data, same seed, same figures: seeded generators, a fixed thread count, deterministic kernels.

Float sums split over a different number of threads round differently, so the thread count is
part of the recipe: 1 by default, whatever the host has. On the shared 2-core machine one thread
trained the cross-encoder twice as fast as two (a batch of 16: 14 s against 33 s of wall time,
1.4 against 5.0 s of CPU, load average ~12): two threads spin at every barrier while the other
one waits for a core. A quiet host may pass threads=2 and gets its own, equally repeatable, figures. torch's
deterministic mode makes any kernel without a deterministic version raise instead of silently
varying; it is switched on only while a learned evaluator trains, then put back as it was.
"""

import contextlib
import random

import numpy as np
import torch

DEFAULT_THREADS = 1


@contextlib.contextmanager
def deterministic(seed, *, threads=DEFAULT_THREADS):
    threads_before = torch.get_num_threads()
    mode_before = torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    seed_everything(seed)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(mode_before)
        torch.set_num_threads(threads_before)


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)
