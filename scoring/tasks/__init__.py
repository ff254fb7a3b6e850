"""scoring's Celery tasks, one module per capability; Celery's autodiscovery imports this package.

`compute_metrics(run_id)` sends one `compute_metrics_chunk(run_id, chunk_id)` per unfinished
chunk; each scores its chunk (resources are loaded once per worker process by the engine's lazy
caches) and the last one to finish closes the run. Only errors that a second attempt can cure
are retried: a lost database connection, a crashed METEOR jar.

Surviving a dead worker: every task here is idempotent (a done chunk is skipped, scores are
upserted, a training run starts again from its queued row), so it is acknowledged late and
re-queued when its worker process dies (`reject_on_worker_lost`); `scoring.services.liveness` counts the starts
and stops a task that keeps killing its worker; a heartbeat thread shows the watchdog
(scoring/services/watchdog.py) that the work is alive. No chord: its callback was lost with a killed
pool process (WorkerLostError -> ChordError, a run stuck at 19/20 with no error).

Each task keeps the name it had when the tasks were one module (`scoring.tasks.<function>`, and
`scoring.recover_runs`): queued messages, the beat schedule and services that queue by name use it.
"""

from scoring.tasks.adem import adem_experiment_task, adem_train_task, learned_train_task, vhred_pretrain_task
from scoring.tasks.judges import judge_dataset_pairs
from scoring.tasks.metrics import compute_metrics, compute_metrics_chunk, finish_metric_run
from scoring.tasks.watchdog import recover_runs

__all__ = [
    "adem_experiment_task",
    "adem_train_task",
    "compute_metrics",
    "compute_metrics_chunk",
    "finish_metric_run",
    "judge_dataset_pairs",
    "learned_train_task",
    "recover_runs",
    "vhred_pretrain_task",
]
