"""Train a learned evaluator (cross-encoder or stacked, issue 41) on a dataset's human scores and
print its pooled out-of-fold correlations; its scores become the metric `learned:<name>`."""

import json

from django.core.management.base import BaseCommand, CommandError

from scoring.management.train_cli import add_training_data_arguments, dataset_and_owner, write_system_level
from scoring.management.train_cli import fmt as _fmt
from scoring.services.adem.refusals import AdemRefusal
from scoring.services.learned.training import DEFAULT_FOLDS, LEARNED_KINDS, learned_train


class Command(BaseCommand):
    help = (
        "Train a learned evaluator beside ADEM: k-fold by context, pooled out-of-fold test figures, then one "
        "model refitted on every context (the one registered and scored with)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--name", required=True, help="Registry name; scores become metric learned:<name>.")
        parser.add_argument("--kind", required=True, choices=LEARNED_KINDS)
        parser.add_argument("--folds", type=int, default=DEFAULT_FOLDS)
        add_training_data_arguments(parser)
        parser.add_argument(
            "--config",
            default=None,
            help="The kind's settings as JSON, e.g. '{\"max_epochs\": 2}' (unknown settings are refused).",
        )
        parser.add_argument("--owner", default=None, help="Username owning the model; default: the dataset's owner.")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **options):
        dataset, owner = dataset_and_owner(options)
        try:
            config = json.loads(options["config"]) if options["config"] else None
        except ValueError as error:
            raise CommandError(f"--config is not JSON: {error}") from error
        if config is not None and not isinstance(config, dict):
            raise CommandError("--config must be a JSON object")
        quiet = options["json"]

        def progress(step):
            if not quiet and options["verbosity"] > 1:
                where = f"fold {step.fold + 1}/{step.folds}" if step.fold is not None else "final fit"
                figures = f"train loss {step.train_loss:.4f}, validation r {step.val_pearson:.3f}"
                self.stderr.write(f"{where}, epoch {step.epoch}: {figures}")

        try:
            model = learned_train(
                dataset=dataset,
                name=options["name"],
                kind=options["kind"],
                folds=options["folds"],
                seed=options["seed"],
                owner=owner,
                config=config,
                aspect=options["aspect"],
                apply_exclusions=not options["no_exclusions"],
                progress=progress,
            )
        except (AdemRefusal, ValueError) as error:
            raise CommandError(str(error)) from error
        results = model.results
        summary = {
            "model": model.name,
            "metric": model.metric_name,
            "kind": model.kind,
            "seed": model.seed,
            "folds": model.folds,
            "config": model.config,
            "training_data": model.training_data,
            "split": results["split"],
            "best_epoch": results.get("best_epoch"),
            "test": results["test"],
            "system_level": results["system_level"],
            "per_fold": [{k: f[k] for k in ("fold", "best_epoch", "val_pearson", "test")} for f in results["folds"]],
            "seconds": results["seconds"],
            "checkpoint": model.checkpoint_path,
        }
        if quiet:
            self.stdout.write(json.dumps(summary, indent=2))
            return
        test = results["test"]
        self.stdout.write(
            f"{model.metric_name} ({model.kind}), pooled out-of-fold over {model.folds} folds: n = {test['n']}"
        )
        self.stdout.write(f"  Pearson  {_fmt(test['pearson'])}")
        self.stdout.write(f"  Spearman {_fmt(test['spearman'])}")
        system = results["system_level"]
        write_system_level(self, system)
        self.stdout.write(f"  checkpoint {model.checkpoint_path}")
