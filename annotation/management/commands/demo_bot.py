"""python manage.py demo_bot [--port P]: RateLab's retrieval demo bot on 127.0.0.1, until Ctrl-C."""

from django.core.management.base import BaseCommand, CommandError

from annotation.services.chat_systems.demo_bot import MODEL_NAME, DemoBotServer, RetrievalBot


class Command(BaseCommand):
    help = (
        "Serve a small retrieval bot over the demo study's conversations on 127.0.0.1, speaking the "
        "OpenAI-compatible /v1/chat/completions protocol (no model is downloaded)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=8765, help="Port on 127.0.0.1 (0: any free port).")
        parser.add_argument("--seed", type=int, default=0, help="Seed of the demo study the bot retrieves from.")

    def handle(self, *args, **options):
        if not 0 <= options["port"] <= 65535:
            raise CommandError("--port takes 0 to 65535")
        bot = RetrievalBot.from_demo(seed=options["seed"])
        try:
            server = DemoBotServer(bot, port=options["port"])
        except OSError as error:
            raise CommandError(f"cannot listen on 127.0.0.1:{options['port']}: {error.strerror}") from None
        self.stdout.write(f"demo bot ({len(bot.lines)} lines) answering at {server.base_url}/chat/completions")
        self.stdout.write(
            "register it (with JUDGE_ALLOW_PRIVATE_HOSTS=1): python manage.py chat_system_add --name demo-bot "
            f"--base-url {server.base_url} --model {MODEL_NAME} --owner YOU"
        )
        self.stdout.flush()
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            self.stdout.write("demo bot stopped")
        finally:
            server.httpd.server_close()
