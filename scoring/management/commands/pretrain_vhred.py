"""Pre-train the VHRED encoder (checkpointed; --resume continues where it stopped)."""

import json

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from scoring.services.adem.refusals import AdemRefusal
from scoring.services.adem.vhred import vhred_pretrain


class Command(BaseCommand):
    help = "Pre-train VHRED on the packaged Chit-Chat corpus or --corpus FILE (JSONL of turn lists, or text)."

    def add_arguments(self, parser):
        parser.add_argument("--corpus", default=None)
        parser.add_argument("--epochs", type=int, default=1)
        parser.add_argument("--resume", action="store_true")
        parser.add_argument("--max-steps", type=int, default=None, help="Stop after this many steps (resumable).")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--config", default=None, help="JSON overrides of the model size, e.g. '{\"embedding\": 64}'"
        )
        parser.add_argument(
            "--owner",
            default=None,
            help="Username whose next ADEM trainings use this checkpoint (default: a shared one, used by "
            "researchers who have none of their own). --resume continues this owner's latest.",
        )
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **options):
        try:
            config = json.loads(options["config"]) if options["config"] else None
        except ValueError as error:
            raise CommandError(f"--config is not JSON: {error}") from error

        owner = None
        if options["owner"]:
            owner = get_user_model().objects.filter(username=options["owner"]).first()
            if owner is None:
                raise CommandError(f"no user named {options['owner']!r}")

        def progress(epoch, step, loss, kl_weight):
            if not options["json"]:
                self.stderr.write(f"epoch {epoch} step {step}: loss {loss:.4f} (KL weight {kl_weight:.3f})")

        try:
            stats = vhred_pretrain(
                corpus=options["corpus"],
                epochs=options["epochs"],
                resume=options["resume"],
                max_steps=options["max_steps"],
                config=config,
                seed=options["seed"],
                owner=owner,
                progress=progress,
            )
        except AdemRefusal as error:
            raise CommandError(str(error)) from error
        if options["json"]:
            self.stdout.write(json.dumps(stats, indent=2))
        else:
            self.stdout.write(
                f"VHRED: {stats['steps']} steps ({stats['total_steps']} in all), {stats['tokens']} tokens at "
                f"{stats['tokens_per_second']:.0f} tokens/s on {stats['device']}; loss {stats['loss']:.4f}; "
                f"checkpoint {stats['checkpoint']}"
            )
