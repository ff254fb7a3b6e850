"""python manage.py compute_metrics --dataset NAME [--metric M]... [--chunk-size N] [--force]"""

import logging
import time

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotation.models import Dataset
from scoring import services, tasks
from scoring.models import MetricRun


class Command(BaseCommand):
    help = "Compute automatic metrics for every response of a dataset (all metrics unless --metric is given)."

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True, help="Dataset name.")
        parser.add_argument("--metric", action="append", default=[], help="Metric name; repeatable.")
        parser.add_argument("--chunk-size", type=int, default=services.DEFAULT_CHUNK_SIZE)
        parser.add_argument("--force", action="store_true", help="Recompute scores that are up to date.")
        parser.add_argument("--no-wait", action="store_true", help="With a broker: queue the run and return.")
        parser.add_argument("--no-progress", action="store_true", help="No progress bar.")

    def handle(self, *args, **options):
        try:
            dataset = Dataset.objects.get(name=options["dataset"])
        except Dataset.DoesNotExist:
            raise CommandError(f"no dataset named {options['dataset']!r}") from None
        try:
            names = services.metric_names(options["metric"])
        except KeyError as exc:
            raise CommandError(exc.args[0]) from None
        eager = tasks.compute_metrics.app.conf.task_always_eager
        run = services.metrics_compute(
            dataset=dataset, metrics=names, chunk_size=options["chunk_size"], force=options["force"], dispatch=not eager
        )
        bar = tqdm(
            total=run.total_chunks,
            unit="chunk",
            desc=f"{len(names)} metric(s), {run.total_responses} responses",
            disable=options["no_progress"],
            file=self.stderr._out,
        )
        if eager:
            # the same chunk tasks, run here one by one so the bar can move between them; Celery
            # logs each eager task's success, which would break the bar into pieces
            logging.getLogger("celery.app.trace").setLevel(logging.WARNING)
            for chunk_id in run.chunks.values_list("id", flat=True):
                tasks.compute_metrics_chunk.apply(args=(run.id, chunk_id), throw=True)
                bar.update(1)
            services.metric_run_finish(run=run)
        elif not options["no_wait"]:
            run = self._wait(run, bar)
        bar.close()
        run.refresh_from_db()
        if run.status == MetricRun.Status.FAILED:
            raise CommandError(f"metric run {run.pk} failed: {run.error}")
        self.stdout.write(f"run {run.pk}: {run.status}, {run.done_chunks}/{run.total_chunks} chunks")

    def _wait(self, run, bar):
        # with a broker, a worker must be running (celery -A config worker); Ctrl-C leaves it queued
        while run.status not in (MetricRun.Status.DONE, MetricRun.Status.FAILED):
            time.sleep(0.5)
            run.refresh_from_db()
            bar.update(run.done_chunks - bar.n)
        return run
