"""python manage.py chat_system_add --name N --base-url URL --model M [--api-key-env VAR]
[--system-prompt TEXT] [--temperature T] [--max-tokens K] [--timeout S] --owner U"""

from django.core.management.base import BaseCommand, CommandError

from annotation.management.cli import user_or_error
from annotation.services.chat_systems.registry import ChatSystemRefusal, chat_system_create_or_refuse


class Command(BaseCommand):
    help = "Register a chat system (an OpenAI-compatible endpoint) that annotators chat with in live chat surveys."

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True)
        parser.add_argument(
            "--base-url", required=True, help="e.g. http://127.0.0.1:8000/v1 (vLLM), http://127.0.0.1:11434/v1 (Ollama)"
        )
        parser.add_argument("--model", required=True)
        parser.add_argument(
            "--api-key-env", default="", help="Name of the environment variable holding the key (never the key)."
        )
        parser.add_argument("--system-prompt", default="")
        parser.add_argument("--temperature", type=float, default=0.7)
        parser.add_argument("--max-tokens", type=int, default=256)
        parser.add_argument("--timeout", type=float, default=30.0, help="Seconds an annotator waits for a reply.")
        parser.add_argument("--connect-timeout", type=float, default=5.0)
        parser.add_argument("--owner", required=True, help="Username of the researcher the system belongs to.")

    def handle(self, *args, **options):
        owner = user_or_error(options["owner"])
        if options["api_key_env"].startswith(("sk-", "Bearer ")):
            raise CommandError("--api-key-env takes the NAME of an environment variable, not the key itself")
        try:
            system = chat_system_create_or_refuse(
                owner=owner,
                name=options["name"],
                base_url=options["base_url"],
                model=options["model"],
                api_key_env=options["api_key_env"],
                system_prompt=options["system_prompt"],
                temperature=options["temperature"],
                max_tokens=options["max_tokens"],
                timeout_seconds=options["timeout"],
                connect_timeout_seconds=options["connect_timeout"],
            )
        except ChatSystemRefusal as refusal:
            raise CommandError(str(refusal)) from None
        self.stdout.write(
            f"chat system {system.name!r} added for {owner.username}: {system.model} at {system.base_url}"
        )
