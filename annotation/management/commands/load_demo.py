from django.conf import settings
from django.core.management.base import BaseCommand

from annotation.services import demo_load
from annotation.services.demo import DEMO_DEV_PASSWORD


class Command(BaseCommand):
    help = "Load the generated demo study (60 contexts, five systems) and its researcher login. Idempotent."

    def add_arguments(self, parser):
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--contexts", type=int, default=60)

    def handle(self, *args, **options):
        dataset, user, password, created = demo_load(seed=options["seed"], n_contexts=options["contexts"])
        state = "Loaded" if created else "Already loaded:"
        self.stdout.write(
            f"{state} dataset {dataset.name!r} ({dataset.contexts.count()} contexts, "
            f"{dataset.systems.count()} systems)."
        )
        if password == DEMO_DEV_PASSWORD:
            self.stdout.write(f"Log in as {user.username!r} with password {password!r}.")
        else:  # the operator's own password is never printed (it would end up in logs)
            self.stdout.write(f"Log in as {user.username!r} with the password in DEMO_PASSWORD.")
        # `make demo` (RATELAB_DEMO) serves on 127.0.0.1 only, where the public password is meant.
        if password == DEMO_DEV_PASSWORD and not settings.DEBUG and not settings.DEMO:
            self.stderr.write("Warning: the demo login uses the public demo password; set DEMO_PASSWORD.")
