"""What the training commands (train_adem, train_evaluator) share: the training data's options, the
dataset and owner they name, and the figures printed after training."""

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from annotation.management.cli import dataset_or_error


def add_training_data_arguments(parser):
    """`--seed`, `--aspect` and `--no-exclusions`: which human scores train the model."""
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--aspect", default="overall")
    parser.add_argument("--no-exclusions", action="store_true", help="Keep ratings the quality checks excluded.")


def dataset_and_owner(options):
    """The dataset named by `--dataset` and the user named by `--owner` (None: the dataset's owner).

    --owner also says whose dataset it is, where several researchers have one of that name."""
    dataset = dataset_or_error(options["dataset"], options["owner"] or "")
    owner = None
    if options["owner"]:
        owner = get_user_model().objects.filter(username=options["owner"]).first()
        if owner is None:
            raise CommandError(f"no user named {options['owner']!r}")
    return dataset, owner


def write_system_level(command, system):
    """The system-level line both commands print under the item-level figures."""
    command.stdout.write(
        f"  system level ({system['n']} systems): Pearson {fmt(system['pearson'])}, Spearman {fmt(system['spearman'])}"
    )


def fmt(value, spec=".3f"):
    return "n/a" if value is None else format(value, spec)
