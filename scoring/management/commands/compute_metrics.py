"""python manage.py compute_metrics --dataset NAME [--metric M]... [--chunk-size N] [--force] [--processes N]
[--threads N]"""

import gc
import logging
import multiprocessing
import os
import queue
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager

from django.core.management.base import BaseCommand, CommandError
from django.db import connection, connections
from tqdm import tqdm

from annotation.management.cli import add_owner_argument, dataset_or_error
from scoring import metrics as engine
from scoring import tasks
from scoring.models import MetricRun
from scoring.services.metrics import compute as services


class Command(BaseCommand):
    help = "Compute automatic metrics for every response of a dataset (all metrics unless --metric is given)."
    # No system checks before the run: they validate the project's configuration (models, URLs,
    # admin, templates), which `check`, `migrate` and the servers already do, and would load every
    # URLconf and view module (~0.1 s of a 20,000-pair run of 1.5 s) for a command that uses none
    # of them. Celery workers, which run the same chunk tasks, do not run them either.
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True, help="Dataset name.")
        add_owner_argument(parser)
        parser.add_argument("--metric", action="append", default=[], help="Metric name; repeatable.")
        parser.add_argument("--chunk-size", type=int, default=services.DEFAULT_CHUNK_SIZE)
        parser.add_argument("--force", action="store_true", help="Recompute scores that are up to date.")
        parser.add_argument("--no-wait", action="store_true", help="With a broker: queue the run and return.")
        parser.add_argument("--no-progress", action="store_true", help="No progress bar.")
        parser.add_argument(
            "--processes",
            type=int,
            default=None,
            help="Without a broker: score chunks in this many local processes. Default: two where the "
            "machine has two cores, the run at least 10 chunks and every metric is a word-overlap one "
            "(BLEU, ROUGE-L, CIDEr, lengths); else one. With a broker the workers' concurrency decides.",
        )
        parser.add_argument(
            "--threads",
            type=int,
            default=2,
            help="Without a broker: chunk tasks per process at once (default 2), so that one chunk's scores "
            "are written while the next chunk is scored.",
        )

    def handle(self, *args, **options):
        # from the start: creating the run (reading every response id) also allocates enough to set
        # off a full collection, which cost single runs of 10,000 responses 0.3 s
        with _startup_objects_frozen():
            self._handle(options)

    def _handle(self, options):
        dataset = dataset_or_error(options["dataset"], options["owner"])
        try:
            names = services.metric_names(options["metric"], owner=dataset.owner_id)
        except KeyError as exc:
            raise CommandError(exc.args[0]) from None
        eager = tasks.compute_metrics.app.conf.task_always_eager
        count = len(names)
        try:
            # Nothing to compute creates no run: an empty one would name no metric, and a command
            # run nightly would fill the newest runs the pipeline bar reads with such (RUNS_CONSIDERED).
            run = services.metrics_compute(
                dataset=dataset,
                metrics=names,
                chunk_size=options["chunk_size"],
                force=options["force"],
                dispatch=not eager,
                refuse_if_up_to_date=True,
            )
        except services.MetricsUpToDate:
            self.stdout.write(f"All {count} metric{'s were' if count != 1 else ' was'} already up to date.")
            return
        bar = tqdm(
            total=run.total_chunks,
            unit="chunk",
            desc=f"{len(run.metrics)} metric(s), {run.total_responses} responses",
            disable=options["no_progress"],
            file=self.stderr._out,
        )
        if eager:
            # the same chunk tasks, run here so the bar can move between them; Celery logs each
            # eager task's success, which would break the bar into pieces
            logging.getLogger("celery.app.trace").setLevel(logging.WARNING)
            chunk_ids = list(run.chunks.values_list("id", flat=True))
            wanted = options["processes"] or auto_processes(run.metrics, len(chunk_ids))
            processes = min(max(1, wanted), len(chunk_ids))
            threads = min(max(1, options["threads"]), len(chunk_ids))
            if connection.in_atomic_block or (connection.vendor == "sqlite" and connection.is_in_memory_db()):
                # other processes' and threads' connections cannot see what this one has not
                # committed (called inside a transaction: tests are), nor an in-memory database
                processes = threads = 1
            self._run_here(run, chunk_ids, processes, threads, bar)
            run = services.metric_run_finish(run=run)  # read afresh, then closed
        elif not options["no_wait"]:
            run = self._wait(run, bar)
        else:
            run.refresh_from_db()
        bar.close()
        if run.status == MetricRun.Status.FAILED:
            raise CommandError(f"metric run {run.pk} failed: {run.error}")
        self.stdout.write(f"run {run.pk}: {run.status}, {run.done_chunks}/{run.total_chunks} chunks")
        if len(run.metrics) < count:
            # without --force a run computes only the metrics that were missing or out of date
            others = count - len(run.metrics)
            were = "metrics were" if others != 1 else "metric was"
            self.stdout.write(f"Computed {', '.join(run.metrics)}; the other {others} {were} already up to date.")

    def _run_here(self, run, chunk_ids, processes, threads, bar):
        """Score the chunks in this process and `processes - 1` forked ones, each taking every
        `processes`-th chunk (chunks are of one size, so the shares are even), in `threads` threads.

        Forked, as Celery's prefork workers are: a child starts at once, with what this process has
        loaded (modules, GloVe, the run's CIDEr document frequencies, built here first), and does
        not return before its share is written, so this process need not wait for it to wind down
        an address space of ~1 GB (~20 ms). Not the database connection: one connection used by
        two processes corrupts its state, so every connection is closed before the fork and each
        process opens its own. On SQLite the processes' writes take turns on the database lock;
        their reading and scoring run side by side.
        """
        children = []
        executor = None
        if processes > 1:
            services.metric_run_prepare(run=run)
            connections.close_all()
            executor = ProcessPoolExecutor(processes - 1, mp_context=multiprocessing.get_context("fork"))
            children = [
                executor.submit(_score_chunks, run.id, chunk_ids[i::processes], threads) for i in range(1, processes)
            ]
        others = processes > 1 or threads > 1

        def progress():
            bar.update((_done_chunks(run) if others else bar.n + 1) - bar.n)

        try:
            # no bar, no progress to count: with other threads or processes that is a query a chunk
            _score_chunks(run.id, chunk_ids[::processes], threads, None if bar.disable else progress)
            for child in children:
                child.result()  # raises the child's error, if any
        finally:
            if executor is not None:
                executor.shutdown(wait=False, cancel_futures=True)
        bar.update(run.total_chunks - bar.n)

    def _wait(self, run, bar):
        # with a broker, a worker must be running (celery -A config worker); Ctrl-C leaves it queued
        while run.status not in (MetricRun.Status.DONE, MetricRun.Status.FAILED):
            time.sleep(0.5)
            run.refresh_from_db()
            bar.update(run.done_chunks - bar.n)
        return run


# The default number of processes: forked only where each gets this many chunks at least. Measured
# on two cores, SQLite, fresh commands (docs/metrics.md, "Start-up"): at 10,000 responses (5 chunks)
# BLEU-1..4 took 0.68-0.78 s in one process and 0.73-0.83 s in two; from 20,000 on two were as fast
# for BLEU-1..4 (100,000: 1.51-1.88 s against 1.55-1.90) and faster for ROUGE-L (1.27 s against
# 1.39-1.56) and for BLEU-1..4 + ROUGE-L + CIDEr (20,000: 1.21-1.24 s against 1.36-1.60; 100,000:
# 3.37-3.61 against 4.17-4.89).
CHUNKS_PER_PROCESS = 5
# Two at most: more were not measured (this machine has two cores), and on SQLite the processes take
# turns to write; --processes N asks for more.
AUTO_MAX_PROCESSES = 2


def auto_processes(names, n_chunks):
    """How many processes score a run by default: more than one only for metrics that fork cheaply
    (METEOR would start a Java process in each, the embedding and neural metrics load their
    vectors or model in each, ADEM and the judges are not the engine's), with enough chunks for each
    and a core for each."""
    if not all(name in _engine_names() and engine.get(name).forks_cheaply for name in names):
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, AUTO_MAX_PROCESSES, n_chunks // CHUNKS_PER_PROCESS))


def _engine_names():
    return {metric.name for metric in engine.all_metrics()}


def _score_chunks(run_id, chunk_ids, threads=1, progress=None):
    """The chunk tasks, run in this process by `threads` threads, each taking the next chunk not yet
    taken; raises the first error, after the other threads have finished the chunk they hold.

    Threads, as a Celery worker with `--pool threads` runs its tasks: the service scores one chunk
    at a time, and on SQLite writes one at a time (see `metric_chunks.metric_chunk_compute`), so while
    one thread writes a chunk the other scores the next one. Each thread uses its own database connection.
    `progress()` is called in this thread after each chunk it finishes.
    """
    pending = queue.SimpleQueue()
    for chunk_id in chunk_ids:
        pending.put(chunk_id)
    failed = threading.Event()
    errors = []

    def work(after_each=None):
        while not failed.is_set():
            try:
                chunk_id = pending.get_nowait()
            except queue.Empty:
                return
            try:
                tasks.compute_metrics_chunk.apply(args=(run_id, chunk_id), throw=True)
            except BaseException as exc:  # the task has recorded it on the run; stop taking chunks
                errors.append(exc)
                failed.set()
                return
            if after_each is not None:
                after_each()

    def helper():
        try:
            work()
        finally:
            connections.close_all()  # this thread's own connections

    helpers = [threading.Thread(target=helper, name=f"compute-metrics-{i}") for i in range(1, threads)]
    for thread in helpers:
        thread.start()
    try:
        work(progress)
    finally:
        for thread in helpers:
            thread.join()
    if errors:
        raise errors[0]


def _done_chunks(run):
    """The run's done chunks, the children's included (they count theirs in the database)."""
    return MetricRun.objects.filter(pk=run.pk).values_list("done_chunks", flat=True).get()


@contextmanager
def _startup_objects_frozen():
    """Leave the objects that exist before the run out of Python's full garbage collections.

    A full collection walks every object of the process; with Django, pandas and torch loaded
    that is about a million objects and 0.1-0.3 s, and the rows a run reads push the collector to
    one every few runs of 10,000 responses (single runs varied by 2x). The objects that exist before
    the run live as long as the process, so walking them finds nothing; frozen, they are skipped
    (and a forked process does not copy the pages the walk would write to), then thawed.
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
