"""A task's sign of life on the row of the run it works on, for the watchdog to read.

While a task works, a thread of its own stamps `heartbeat_at` on the run's row every
RUN_HEARTBEAT_SECONDS. The thread dies with its process: a worker killed mid-task leaves a
heartbeat that grows old, which is how the watchdog (scoring/services/watchdog.py, analysis/watchdog.py)
tells a lost run from a long one without a limit on how long a task may take.
"""

import logging
import os
import socket
import threading
from contextlib import contextmanager

from django.conf import settings
from django.db import DatabaseError, connections
from django.utils import timezone

logger = logging.getLogger("config.heartbeat")  # its name before the move: log settings (and tests) name it


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


# --- which process holds a run ---------------------------------------------------------------
# A heartbeat tells a dead holder from a live one only after it has grown old (two beats at least,
# so a busy database's missed beat is not taken for a death). A pool process killed with SIGKILL
# has its message redelivered within a second, to the same worker as a rule: there its death can be
# proven at once from the process table, so the redelivered task takes over without waiting.


def _read(path):
    try:
        with open(path, encoding="ascii", errors="replace") as file:
            return file.read().strip()
    except OSError:
        return None


def _start_and_state(pid):
    """`(start time in clock ticks since boot, state letter)` of process `pid` from /proc, or None."""
    stat = _read(f"/proc/{pid}/stat")
    if not stat:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()  # after "pid (command name)", which may hold spaces
    return fields[19], fields[0]


def _machine():
    """Where pids mean the same processes: the host, its boot, and the pid namespace (a container)."""
    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        namespace = None
    boot = _read("/proc/sys/kernel/random/boot_id")
    if not (namespace and boot):
        return None
    return f"{socket.gethostname()}|{boot}|{namespace}"


def process_identity():
    """This process as a run records its holder: machine, pid and the pid's start time. Without
    /proc (not Linux) only the host and pid, of which `process_ended` can tell nothing."""
    machine = _machine()
    start = _start_and_state(os.getpid()) if machine else None
    if machine is None or start is None:
        return f"{socket.gethostname()}|{os.getpid()}"
    return f"{machine}|{os.getpid()}|{start[0]}"


def process_ended(identity):
    """Whether the process `identity` names has ended: True when it ran on this machine (same host,
    boot and pid namespace) and its pid is free now, a zombie, or another process's (another start
    time); False when it runs here still; None when that cannot be known from here."""
    machine = _machine()
    parts = (identity or "").rsplit("|", 2)
    if machine is None or len(parts) != 3 or parts[0] != machine:
        return None
    _, pid, start = parts
    now = _start_and_state(pid)
    return now is None or now[0] != start or now[1] in ("Z", "X")
