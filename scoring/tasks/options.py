"""Delivery options that scoring's tasks share."""

# Safe to run again after a worker died mid-way: acknowledge on completion, re-queue on a lost worker.
SURVIVES_LOST_WORKER = {"acks_late": True, "reject_on_worker_lost": True}
