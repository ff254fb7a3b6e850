"""The README's main job: the whole pipeline on the generated demo study.

Each stage is the same command a researcher would run by hand, so the demo exercises the
real interfaces: import, a live local survey, simulated annotators, quality control, every
metric, an ADEM model, and the correlation report.
"""

import time

from django.core.management import BaseCommand, call_command

from annotation.models import Dataset, Survey
from annotation.services.demo import DEMO_USERNAME

DEMO_DATASET = "demo"
LIVE_SURVEY = "demo-live"
SIMULATED_SURVEY = "demo-simulated"
PAIRWISE_SURVEY = "demo-pairwise"
ADEM_MODEL = "demo-adem"


class Command(BaseCommand):
    help = "Build the demo study and run the whole pipeline on it (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument("--annotators", type=int, default=12)
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")

    def handle(self, *args, annotators, seed, base_url, **options):
        started = time.monotonic()
        self._stage("Generating the demo study")
        call_command("load_demo", stdout=self.stdout)
        dataset = Dataset.objects.get(name=DEMO_DATASET, owner__username=DEMO_USERNAME)

        if not Survey.objects.filter(name=SIMULATED_SURVEY, owner__username=DEMO_USERNAME).exists():
            self._stage(f"Simulating {annotators} annotators on a local survey")
            call_command(
                "create_survey",
                dataset=DEMO_DATASET,
                name=SIMULATED_SURVEY,
                contexts_per_hit=5,
                assignments=3,
                attention_checks=1,
                overlap=5,
                base_url=base_url,
                owner=DEMO_USERNAME,
                stdout=self.stdout,
            )
            call_command(
                "simulate_ratings",
                SIMULATED_SURVEY,
                annotators=annotators,
                seed=seed,
                # Two of twelve answer at random, fast: quality control should exclude them (and
                # only them, give or take a careful rater who lands just under kappa 0.2).
                careless=2 / annotators,
                owner=DEMO_USERNAME,
                stdout=self.stdout,
            )
        self._stage("Quality control: agreement and exclusions")
        call_command("recompute_quality", SIMULATED_SURVEY, owner=DEMO_USERNAME, stdout=self.stdout)

        if not Survey.objects.filter(name=PAIRWISE_SURVEY, owner__username=DEMO_USERNAME).exists():
            self._stage("Simulating a small pairwise (A/B) survey: which of two replies is better")
            # Two comparisons per context, spread evenly over the fifteen pairs of the five systems and
            # the context's reference (one more side, shown as just another reply): small and quick.
            call_command(
                "create_survey",
                dataset=DEMO_DATASET,
                name=PAIRWISE_SURVEY,
                task_type="pairwise",
                pair_budget=2,
                reference_pairs="also",
                contexts_per_hit=5,
                assignments=3,
                attention_checks=2,
                ask_strength=True,
                base_url=base_url,
                owner=DEMO_USERNAME,
                stdout=self.stdout,
            )
            call_command(
                "simulate_ratings", PAIRWISE_SURVEY, annotators=8, seed=seed, owner=DEMO_USERNAME, stdout=self.stdout
            )

        if not Survey.objects.filter(name=LIVE_SURVEY, owner__username=DEMO_USERNAME).exists():
            self._stage("Opening a live local survey for you to rate")
            call_command(
                "create_survey",
                dataset=DEMO_DATASET,
                name=LIVE_SURVEY,
                contexts_per_hit=3,
                base_url=base_url,
                owner=DEMO_USERNAME,
                stdout=self.stdout,
            )

        self._stage("Computing every automatic metric")
        call_command("compute_metrics", dataset=DEMO_DATASET, owner=DEMO_USERNAME, stdout=self.stdout)
        self._stage("Training ADEM on the accepted ratings")
        # Owned by the demo researcher, so /scoring/adem/ and its score API show it to them.
        call_command(
            "train_adem",
            dataset=DEMO_DATASET,
            name=ADEM_MODEL,
            encoder="glove",
            owner=DEMO_USERNAME,
            stdout=self.stdout,
        )
        call_command(
            "compute_metrics",
            dataset=DEMO_DATASET,
            metric=[f"adem:{ADEM_MODEL}"],
            owner=DEMO_USERNAME,
            stdout=self.stdout,
        )

        self._stage("Correlation with humans")
        call_command(
            "report",
            dataset=DEMO_DATASET,
            survey=SIMULATED_SURVEY,
            owner=DEMO_USERNAME,
            format="summary",
            stdout=self.stdout,
        )
        # The table scores every response, most of which ADEM was trained on: say which figure is fair.
        self.stdout.write(
            f"Note: adem:{ADEM_MODEL} above is scored on all responses, including those it was trained on;"
            " its fair figure is the held-out test printed after training."
        )

        self._stage("Pairwise: Bradley-Terry ranking of the systems")
        call_command(
            "report",
            dataset=DEMO_DATASET,
            survey=PAIRWISE_SURVEY,
            owner=DEMO_USERNAME,
            format="summary",
            bootstrap=200,
            stdout=self.stdout,
        )

        live = Survey.objects.get(name=LIVE_SURVEY, owner__username=DEMO_USERNAME)
        self.stdout.write("")
        self.stdout.write(self.style.SUCCESS(f"Demo ready in {time.monotonic() - started:.0f} s."))
        self.stdout.write(f"  Researcher pages: {base_url}/  (login: demo / demo-password)")
        self.stdout.write(f"  Report:           {base_url}/analysis/datasets/{dataset.pk}/report/")
        self.stdout.write(f"  Rate as an annotator: {base_url}/s/{live.token}/")

    def _stage(self, text):
        self.stdout.write(self.style.MIGRATE_HEADING(f"==> {text}"))
