"""The ADEM paper's experiments on a dataset: leave-one-system-out and data efficiency, for ADEM or a
learned evaluator kind (--kind cross-encoder|stacked)."""

import json

from django.core.management.base import BaseCommand, CommandError

from annotation.management.cli import add_owner_argument, dataset_or_error
from scoring.adem.choices import KINDS, VARIANTS
from scoring.adem.encoders import ENCODERS
from scoring.models import AdemModel
from scoring.services.adem.refusals import AdemRefusal
from scoring.services.adem.training import adem_experiment
from scoring.services.learned.experiments import learned_experiment
from scoring.services.learned.training import LEARNED_KINDS


class Command(BaseCommand):
    help = "Run leave-one-system-out or data-efficiency (pooled k-fold by context) and print the correlations."

    def add_arguments(self, parser):
        parser.add_argument("experiment", choices=KINDS)
        parser.add_argument("--dataset", required=True)
        add_owner_argument(parser)
        parser.add_argument("--encoder", choices=ENCODERS, default="minilm")
        parser.add_argument(
            "--precision",
            choices=AdemModel.Precision.values,
            default=AdemModel.Precision.STANDARD,
            help="minilm only: int8 runs ONNX Runtime with int8 weights (~1.5x faster on a CPU, own vectors).",
        )
        parser.add_argument("--variant", choices=VARIANTS, default="full")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--folds", type=int, default=5)
        parser.add_argument(
            "--kind",
            choices=("adem", *LEARNED_KINDS),
            default="adem",
            help="The evaluator the experiment trains: ADEM (its --encoder and --variant) or a learned kind.",
        )
        parser.add_argument(
            "--config", default=None, help="A learned kind's settings as JSON (as train_evaluator --config)."
        )
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **options):
        dataset = dataset_or_error(options["dataset"], options["owner"])
        try:
            if options["kind"] != "adem":
                config = json.loads(options["config"]) if options["config"] else None
                run = learned_experiment(
                    dataset=dataset,
                    experiment=options["experiment"],
                    kind=options["kind"],
                    seed=options["seed"],
                    folds=options["folds"],
                    config=config,
                )
            else:
                run = adem_experiment(
                    dataset=dataset,
                    kind=options["experiment"],
                    encoder=options["encoder"],
                    precision=options["precision"],
                    variant=options["variant"],
                    seed=options["seed"],
                    folds=options["folds"],
                )
        except (AdemRefusal, ValueError) as error:
            raise CommandError(str(error)) from error
        result = run.result
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2))
            return
        if result["experiment"] == "leave-one-system-out":
            self.stdout.write("system: Spearman trained with / without it (n)")
            for row in result["systems"]:
                self.stdout.write(
                    f"  {row['system']}: {_fmt(row['trained_with']['spearman'])} / "
                    f"{_fmt(row['trained_without']['spearman'])} ({row['trained_without']['n']})"
                )
        else:
            self.stdout.write("fraction of training data: Pearson / Spearman (n)")
            for row in result["fractions"]:
                test = row["test"]
                self.stdout.write(
                    f"  {row['fraction']:.0%}: {_fmt(test['pearson'])} / {_fmt(test['spearman'])} ({test['n']})"
                )


def _fmt(value):
    return "n/a" if value is None else f"{value:.3f}"
