from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.importing.dstc9 import aspect_scale, convert, write_jsonl


class Command(BaseCommand):
    help = (
        "Convert DSTC9's interactive-evaluation release (chatbot1.json ... chatbot4.json) into a conversations "
        "file and a ratings file, and print the commands that import them."
    )

    def add_arguments(self, parser):
        parser.add_argument("folder", help="The folder holding chatbot*.json.")
        parser.add_argument("--output-dir", required=True)

    def handle(self, *args, **options):
        conversations, ratings = convert(options["folder"])
        if not conversations:
            raise CommandError(f"no chatbot*.json in {options['folder']}")
        out = Path(options["output_dir"])
        out.mkdir(parents=True, exist_ok=True)
        write_jsonl(conversations, out / "dstc9-conversations.jsonl")
        write_jsonl(ratings, out / "dstc9-ratings.jsonl")
        aspects = sorted({r["aspect"] for r in ratings})
        scales = " ".join(f"--scale {key}={aspect_scale(key)[0]}-{aspect_scale(key)[1]}" for key in aspects)
        self.stdout.write(
            f"Wrote {len(conversations)} conversations and {len(ratings)} ratings to {out}. Import them with:\n"
            f"  python manage.py import_conversations {out / 'dstc9-conversations.jsonl'} --name dstc9\n"
            f"  python manage.py import_conversation_ratings {out / 'dstc9-ratings.jsonl'} --dataset dstc9 {scales}"
        )
