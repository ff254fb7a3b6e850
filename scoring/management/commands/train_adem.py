"""Train an ADEM model on a dataset's human scores and print its held-out correlations."""

import json

from django.core.management.base import BaseCommand, CommandError

from annotation.services.text.numbers import p_value
from scoring.adem.choices import VARIANTS
from scoring.adem.encoders import ENCODERS
from scoring.management.train_cli import add_training_data_arguments, dataset_and_owner, write_system_level
from scoring.management.train_cli import fmt as _fmt
from scoring.models import AdemModel
from scoring.services.adem.refusals import AdemRefusal
from scoring.services.adem.training import adem_train


class Command(BaseCommand):
    help = "Train ADEM on the human ratings of a dataset (split by context, or --folds K cross-validation)."

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--name", required=True, help="Registry name; scores become metric adem:<name>.")
        parser.add_argument("--encoder", choices=ENCODERS, default="minilm")
        parser.add_argument(
            "--precision",
            choices=AdemModel.Precision.values,
            default=AdemModel.Precision.STANDARD,
            help="minilm only: int8 runs ONNX Runtime with int8 weights (~1.5x faster on a CPU, own vectors).",
        )
        parser.add_argument("--variant", choices=VARIANTS, default="full")
        parser.add_argument("--folds", type=int, default=None, help="k-fold by context; pooled out-of-fold test.")
        add_training_data_arguments(parser)
        parser.add_argument("--debias-length", action="store_true", help="Over-sample to decorrelate length.")
        parser.add_argument(
            "--owner",
            default=None,
            help="Username owning the model (sees it in the pages and API); default: the dataset's owner.",
        )
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **options):
        dataset, owner = dataset_and_owner(options)
        quiet = options["json"]

        def progress(epoch, train_loss, val_pearson):
            if not quiet and options["verbosity"] > 1:
                self.stderr.write(f"epoch {epoch}: train loss {train_loss:.4f}, validation r {val_pearson:.3f}")

        try:
            model = adem_train(
                dataset=dataset,
                name=options["name"],
                encoder=options["encoder"],
                precision=options["precision"],
                variant=options["variant"],
                seed=options["seed"],
                folds=options["folds"],
                aspect=options["aspect"],
                apply_exclusions=not options["no_exclusions"],
                config={"debias_length": options["debias_length"]},
                owner=owner,
                progress=progress,
            )
        except AdemRefusal as error:
            raise CommandError(str(error)) from error
        results = model.results
        summary = {
            "model": model.name,
            "metric": model.metric_name,
            "encoder": model.encoder,
            "precision": model.precision,
            "variant": model.variant,
            "seed": model.seed,
            "folds": model.folds,
            "training_data": model.training_data,
            "split": results["split"],
            "best_epoch": results["best_epoch"],
            "test": results["test"],
            "system_level": results["system_level"],
            "checkpoint": model.checkpoint_path,
        }
        if quiet:
            self.stdout.write(json.dumps(summary, indent=2))
            return
        test = results["test"]
        how = f"pooled over {model.folds} folds" if model.folds else "held-out contexts"
        encoder = model.encoder
        if model.precision != AdemModel.Precision.STANDARD:
            encoder = f"{encoder} {model.precision}"
        self.stdout.write(f"ADEM {model.name} ({encoder}, {model.variant}), test on {how}: n = {test['n']}")
        self.stdout.write(f"  Pearson  {_fmt(test['pearson'])} ({_p(test['pearson_p'])})")
        self.stdout.write(f"  Spearman {_fmt(test['spearman'])} ({_p(test['spearman_p'])})")
        system = results["system_level"]
        write_system_level(self, system)
        for name, means in system["systems"].items():
            self.stdout.write(f"    {name}: predicted {means['predicted']:.3f}, human {means['human']:.3f}")
        self.stdout.write(f"  checkpoint {model.checkpoint_path}")


def _p(value):
    """A p-value as every page writes it (annotation.services.text.numbers): "p <0.001" or "p = 0.042"."""
    shown = p_value(value)
    return f"p {shown}" if shown.startswith("<") else f"p = {shown}"
