"""Keep the best epoch by validation Pearson correlation; stop after `patience` epochs without gain.

The same rule as ADEM's training loop (scoring.adem.training): the figure watched is the one the
evaluator is judged on, the best epoch's state is what the fit returns.
"""

import math

import numpy as np

from annotation.services.runtime.lazy_import import lazy_module

stats = lazy_module("scipy.stats")


def pearson(predicted, human):
    predicted, human = np.asarray(predicted, dtype=np.float64), np.asarray(human, dtype=np.float64)
    if predicted.size < 3 or np.std(predicted) < 1e-12 or np.std(human) < 1e-12:
        return 0.0
    value = float(stats.pearsonr(predicted, human)[0])
    return value if math.isfinite(value) else 0.0


class BestSoFar:
    def __init__(self, patience):
        self.patience = patience
        self.best_score = -2.0
        self.best_epoch = 0
        self.state = None

    def update(self, epoch, val_pearson, snapshot):
        """Record an epoch; `snapshot()` is called only when it is the best so far. True: stop now."""
        if val_pearson > self.best_score + 1e-6 or self.state is None:
            self.best_score, self.best_epoch, self.state = val_pearson, epoch, snapshot()
            return False
        return epoch - self.best_epoch >= self.patience
