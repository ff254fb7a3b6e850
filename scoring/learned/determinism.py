"""Same data, same seed, same figures: seeded generators, a fixed thread count, deterministic kernels.

Float sums split over a different number of threads round differently, so the thread count is
part of the recipe (2 by default, the benchmark machine's cores, whatever the host has). torch's
deterministic mode makes any kernel without a deterministic version raise instead of silently
varying; it is switched on only while a learned evaluator trains, then put back as it was.
"""

import contextlib
import random

import numpy as np
import torch

DEFAULT_THREADS = 2


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
