"""A task's sign of life on the row of the run it works on, for the watchdog to read.

While a task works, a thread of its own stamps `heartbeat_at` on the run's row every
RUN_HEARTBEAT_SECONDS. The thread dies with its process: a worker killed mid-task leaves a
heartbeat that grows old, which is how the watchdog (scoring/watchdog.py, analysis/watchdog.py)
tells a lost run from a long one without a limit on how long a task may take.
"""

import logging
import threading
from contextlib import contextmanager

from django.conf import settings
from django.db import DatabaseError, connections
from django.utils import timezone

logger = logging.getLogger(__name__)


@contextmanager
def heartbeat(rows, *, interval=None):
    """Stamp `heartbeat_at` on `rows` (a queryset of one run) every `interval` seconds while the
    block runs. The first stamp is the caller's (starting a run stamps it): a task that ends within
    one interval never touches the database from this thread."""
    interval = settings.RUN_HEARTBEAT_SECONDS if interval is None else interval
    if connections[rows.db].in_atomic_block:
        # The task runs inside its caller's open transaction (run eagerly in a test, or from code in an
        # atomic block), which has written the run's row: a beat from another connection could not
        # store anything before that transaction ends. PostgreSQL would make it wait on the row lock;
        # the tests' in-memory SQLite refuses it at once ("database table is locked"), which logged a
        # warning with its traceback at every beat of a long test. No thread, then.
        yield
        return
    stop = threading.Event()

    def beat():
        try:
            while not stop.wait(interval):
                try:
                    rows.update(heartbeat_at=timezone.now())
                except DatabaseError:  # a busy database: the next beat will do
                    logger.warning("heartbeat of %s not stored", rows.model.__name__, exc_info=True)
        finally:
            connections.close_all()  # this thread's own connection

    thread = threading.Thread(target=beat, name=f"heartbeat-{rows.model.__name__}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        # Not for ever: a beat may still wait on a lock another transaction holds; it then ends by
        # itself once that transaction ends.
        thread.join(timeout=1)
