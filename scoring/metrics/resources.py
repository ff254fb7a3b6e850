"""What metric families load once per process before their first score, named so a run can say so.

A fresh process pays for these on its first run: the MiniLM model (torch and transformers
imported, the weights read), the METEOR 1.5 jar (a JVM started, its tables read), NLTK and
WordNet, the GloVe vectors. Each module declares its own with `declare`; `ensure` loads one once
per process, under a lock, so a run and the boot's warm-up (config/runtime/warmup.py) that ask at the same
time load it once: the second waits for the first. The registry ensures a family's resources before
it scores (`registry.score`), and reports the ones still to load to the run's progress first.

`typical_s` is what a first load took on a 2-core machine (bench/bench_warmup.py, "first metric
run"): a page says "about N s" with it before the load has happened in that process.
"""

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Resource:
    key: str
    label: str  # what a page says is loading: "the MiniLM model"
    typical_s: float
    load: Callable = field(compare=False, repr=False)  # loads it into this process (cached there)
    # True once this process holds it, however it got it (a direct call, or a parent before the fork)
    loaded: Callable = field(compare=False, repr=False)
    # Its load mostly waits on another process (the JVM): started first, on a thread of its own, it
    # overlaps the loads that need this process's CPU (and its GIL) instead of following them.
    own_process: bool = False


_RESOURCES: dict[str, Resource] = {}
_locks: dict[tuple, threading.Lock] = {}
_locks_lock = threading.Lock()
# (pid, key) of the loads `ensure` finished: `loaded()` may be true while a load is still under way
# (the jar's process started but its tables not read), so a second thread waits for the lock
_ensured: set = set()


def declare(resource):
    _RESOURCES[resource.key] = resource
    return resource


def get(key):
    return _RESOURCES[key]


def all_resources():
    return list(_RESOURCES.values())


def pending(keys):
    """The resources of `keys` this process has not loaded yet, in order."""
    pid = os.getpid()
    return [_RESOURCES[key] for key in keys if (pid, key) not in _ensured and not _RESOURCES[key].loaded()]


def _lock(key):
    # one per process: a lock held by a thread of the parent when it forked stays held in the child
    with _locks_lock:
        return _locks.setdefault((os.getpid(), key), threading.Lock())


def ensure(key):
    """Load the resource unless this process holds it; the seconds it took, or None if it was there."""
    resource, done = _RESOURCES[key], (os.getpid(), key)
    if done in _ensured:
        return None
    with _lock(key):  # another thread loading it (the warm-up): wait for it rather than load it twice
        if done in _ensured:
            return None
        start = time.perf_counter()
        resource.load()
        _ensured.add(done)
        return time.perf_counter() - start


def start_in_background(keys):
    """Start, each on a daemon thread, the loads of `keys` that wait on a process of their own (see
    `Resource.own_process`). The family that needs one waits for it in `ensure`; a load that fails
    here is tried again there, which reports the error."""
    pid = os.getpid()
    for key in keys:
        if _RESOURCES[key].own_process and (pid, key) not in _ensured and not _lock(key).locked():
            threading.Thread(target=_ensure_quietly, args=(key,), name=f"load-{key}", daemon=True).start()


def _ensure_quietly(key):
    with contextlib.suppress(Exception):  # the family's own ensure() tries again and reports it
        ensure(key)


def load_all(keys=None):
    """Load every resource (or those of `keys`) this process lacks; `{key: seconds}` of those it
    loaded. One that cannot load here (no Java, no WordNet) is logged and skipped: the run that
    needs it reports the reason, as without a warm-up. Those with a process of their own are
    started first, in the background, so their wait overlaps the others' loads."""
    keys = list(keys or _RESOURCES)
    start_in_background(keys)
    took = {}
    for key in keys:
        try:
            seconds = ensure(key)
        except Exception as error:  # a warm-up must not stop the process; the run names the error
            logger.warning("warm-up: %s not loaded: %s", _RESOURCES[key].label, error)
            continue
        if seconds is not None:
            took[key] = seconds
            logger.info("warm-up: %s loaded in %.1f s", _RESOURCES[key].label, seconds)
    return took
