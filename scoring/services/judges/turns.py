"""One judging of pairs per judge at a time, across threads and (on PostgreSQL) processes.

Two judgings of the same pairs at once (the button pressed in two tabs, the command run while the
task runs) would both miss the cache and pay every request twice. Taking turns, the second finds
the first's answers in the cache and asks nothing. PostgreSQL's session advisory lock is held by
the worker's connection for the judging and released after it (or when the worker dies); the
embedded mode (SQLite, one web process with background threads) needs only a lock per judge.
"""

import contextlib
import threading

from django.db import connection

# First key of the advisory lock: a constant of RateLab's pair judging; the second is the judge's id.
PAIRS_LOCK_SPACE = 0x52A1

_local_locks = {}
_local_locks_guard = threading.Lock()


@contextlib.contextmanager
def judge_pairs_turn(judge):
    """Hold the judge's turn to judge pairs for the duration of the block (waits for it)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s, %s)", [PAIRS_LOCK_SPACE, judge.pk])
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [PAIRS_LOCK_SPACE, judge.pk])
        return
    with _local_locks_guard:
        lock = _local_locks.setdefault(judge.pk, threading.Lock())
    with lock:
        yield


@contextlib.contextmanager
def judge_pairs_idle(judge):
    """Whether no judging of pairs holds the judge's turn (yields a bool), asked without waiting.

    When idle the turn is kept for the block: on PostgreSQL until the enclosing transaction ends (a
    transaction-level advisory lock; outside a transaction it is only a look), elsewhere until the
    block ends. Removing the judge holds it so that no judging starts half-way through."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", [PAIRS_LOCK_SPACE, judge.pk])
            idle = bool(cursor.fetchone()[0])
        yield idle
        return
    with _local_locks_guard:
        lock = _local_locks.setdefault(judge.pk, threading.Lock())
    idle = lock.acquire(blocking=False)
    try:
        yield idle
    finally:
        if idle:
            lock.release()
