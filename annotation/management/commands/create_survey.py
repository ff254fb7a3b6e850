import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from annotation import services
from annotation.crowd.base import ProviderError
from annotation.crowd.link_platform import completion_url_problem, platform_settings
from annotation.crowd.prolific.pay import floor_problem
from annotation.crowd.prolific.study import DEFAULT_MINUTES, entry_url, study_settings
from annotation.kinds.registry import all_kinds, kind_named
from annotation.management.cli import dataset_or_error
from annotation.models import Survey


def prolific_refusal(options):
    """Refuse, with the figures, a Prolific survey that cannot be published as asked."""
    base = options["base_url"] or settings.PUBLIC_BASE_URL
    if not base.startswith("https://"):
        raise CommandError("A Prolific study URL needs PUBLIC_BASE_URL (or --base-url), an https:// address.")
    reward = options["reward_cents"] if options["reward_cents"] is not None else Survey().reward_cents
    # In the currency this server's Prolific workspace pays in (publishing checks it against the workspace).
    problem = floor_problem(reward, options["minutes"] or DEFAULT_MINUTES, settings.PROLIFIC_CURRENCY)
    if problem:
        raise CommandError(problem)


class Command(BaseCommand):
    help = "Create a rating, pairwise or writing survey over a dataset, launch it, and print the annotators' link."

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True, help="Dataset name.")
        parser.add_argument("--name", required=True, help="Survey name (unique).")
        parser.add_argument("--contexts-per-hit", type=int, default=5)
        parser.add_argument("--assignments", type=int, default=3, help="Distinct annotators per HIT.")
        parser.add_argument("--attention-checks", type=int, default=1, help="Attention checks per HIT.")
        parser.add_argument("--overlap", type=int, default=0, help="Contexts every annotator rates.")
        parser.add_argument("--max-hits", type=int, default=10, help="HITs per annotator at most.")
        parser.add_argument("--provider", default="local", choices=["local", "mturk", "prolific", "link"])
        parser.add_argument("--reward-cents", type=int, default=None, help="Prolific: reward per participant.")
        parser.add_argument("--minutes", type=int, default=None, help="Prolific: estimated median minutes.")
        parser.add_argument("--completion-url", default="", help="link: the platform's completion URL, with {code}.")
        parser.add_argument("--participant-param", default="participant_id", help="link: the id's URL parameter.")
        parser.add_argument("--systems", default="", help="Comma-separated system names (default: all).")
        parser.add_argument("--aspects", default="", help="Extra scales beside overall, comma-separated.")
        parser.add_argument("--policy", default="flag", choices=["flag", "exclude", "reject"])
        parser.add_argument(
            "--gold",
            default="",
            help='JSONL of gold checks: {"context": [turns], "response": "...", "accepted_scores": [4, 5]} per line.',
        )
        parser.add_argument(
            "--owner",
            default="",
            help="Username of the dataset's owner, needed when several researchers have a dataset of that name; "
            "also owns the survey (default: the dataset's owner).",
        )
        parser.add_argument(
            "--task-type",
            default="rate",
            choices=["rate", "pairwise", "write", "bws", "conversation", "acute", "chat"],
            help="rate, pairwise (A/B), write (annotators write the next turn; needs --system-name), bws "
            "(best-worst scaling), conversation (a dataset's conversations: bot turns flagged, each conversation "
            "rated), acute (two conversations compared, ACUTE-Eval) or chat (live chat with --chat-systems); for "
            "conversation and acute --contexts-per-hit counts "
            "conversations (pairs) per HIT.",
        )
        for kind in all_kinds():
            kind.add_command_arguments(parser)
        parser.add_argument("--tuple-size", type=int, default=4, help="bws: replies shown together (at least 3).")
        parser.add_argument(
            "--across-contexts", dest="bws_across_contexts", action="store_true",
            help="bws: each set shows replies to different contexts (each under its own conversation); needs "
            "--contexts-per-hit at least --tuple-size.",
        )  # fmt: skip
        parser.add_argument(
            "--system-name", default="",
            help="write: the system that accepted written replies join (required for a writing survey).",
        )  # fmt: skip
        parser.add_argument(
            "--reference-llm-systems", default="",
            help="write: the dataset's systems (comma-separated) whose responses are a reference LLM's replies to "
            "the same contexts, one per sample; a written reply very like one is flagged (issue 40).",
        )  # fmt: skip
        parser.add_argument("--pair-budget", type=int, default=0, help="pairwise: comparisons per context (0 = all).")
        parser.add_argument(
            "--reference-pairs",
            default="none",
            choices=["none", "also", "only"],
            help="pairwise: also = the context's reference is one more side; only = each system against it.",
        )
        parser.add_argument("--no-tie", action="store_true", help="pairwise: annotators must choose A or B.")
        parser.add_argument("--ask-strength", action="store_true", help="pairwise: ask slightly/clearly better.")
        parser.add_argument("--ask-reason", action="store_true", help="pairwise: ask for a one-line reason.")
        parser.add_argument(
            "--max-position-bias", type=float, default=None,
            help="pairwise: exclude an annotator whose share of left choices is further than this from 0.5.",
        )  # fmt: skip
        parser.add_argument("--min-position-judgements", type=int, default=20, help="pairwise: ... over at least N.")
        parser.add_argument(
            "--min-repeat-consistency", type=float, default=None,
            help="pairwise: exclude an annotator answering a smaller share of swapped repeats consistently.",
        )  # fmt: skip
        parser.add_argument("--min-repeats", type=int, default=3, help="pairwise: ... over at least N repeats.")
        parser.add_argument(
            "--max-pasted-share", type=float, default=None,
            help="exclude a worker with more than this share of written replies flagged mostly pasted.",
        )  # fmt: skip
        parser.add_argument(
            "--min-competence", type=float, default=None,
            help="exclude a worker whose estimated competence (the ordinal spammer model on a rating scale, MACE "
            "otherwise) is below this.",
        )  # fmt: skip
        parser.add_argument(
            "--kappa-threshold", type=float, default=0.2,
            help="exclude a worker whose mean Cohen's kappa with the agreeing annotators is below this.",
        )  # fmt: skip
        parser.add_argument(
            "--kappa-weighting", default="none", choices=["none", "linear", "quadratic"],
            help="kappa's weights for the scale: none (any difference disagrees), linear or quadratic.",
        )  # fmt: skip
        parser.add_argument(
            "--layout-seed",
            default="",
            help="Lay the HITs out from this seed, the same way in every database (default: a random layout).",
        )
        parser.add_argument("--draft", action="store_true", help="Create without launching.")
        parser.add_argument("--base-url", default="", help="Public address for the link (default PUBLIC_BASE_URL).")

    def handle(self, **options):
        dataset = dataset_or_error(options["dataset"], options["owner"])
        owner = dataset.owner
        gold = self._gold(options["gold"]) if options["gold"] else []
        if options["provider"] == "prolific":
            prolific_refusal(options)  # before anything is written
        if options["provider"] == "link" and completion_url_problem(options["completion_url"]):
            raise CommandError(completion_url_problem(options["completion_url"]))
        try:
            kind = kind_named(options["task_type"])
            survey = kind.command_create(dataset=dataset, owner=owner, options=options)
            if survey is None:
                survey = self._create(dataset, owner, gold, options)
            if options["provider"] == "prolific":
                study_settings(survey, reward_cents=options["reward_cents"], minutes=options["minutes"])
            if options["provider"] == "link":
                platform_settings(
                    survey, participant_param=options["participant_param"], completion_url=options["completion_url"]
                )
            if not options["draft"]:
                survey = services.survey_launch(survey=survey)
        except (services.SurveyError, services.HITLayoutError, KeyError, ProviderError) as error:
            raise CommandError(str(error)) from None
        base = (options["base_url"] or settings.PUBLIC_BASE_URL or "http://127.0.0.1:8000").rstrip("/")
        self.stderr.write(f"Survey {survey.name!r}: {survey.hits.count()} HITs, status {survey.status}.")
        if options["provider"] == "link":
            self.stdout.write(f"{base}/l/{survey.token}/?{options['participant_param']}=<the participant's id>")
            return
        if options["provider"] == "prolific":
            study_id = study_settings(survey).study_id or "not created yet (draft)"
            self.stderr.write(f"Prolific study: {study_id}. The study URL to give Prolific:")
            self.stdout.write(entry_url(survey, base))
            return
        self.stdout.write(f"{base}/s/{survey.token}/")

    def _create(self, dataset, owner, gold, options):
        return services.survey_create(
            dataset=dataset,
            name=options["name"],
            owner=owner,
            systems=[s.strip() for s in options["systems"].split(",") if s.strip()],
            aspects=[a.strip() for a in options["aspects"].split(",") if a.strip()],
            contexts_per_hit=options["contexts_per_hit"],
            assignments_per_hit=options["assignments"],
            attention_checks_per_hit=options["attention_checks"],
            overlap_contexts=options["overlap"],
            max_hits_per_annotator=options["max_hits"],
            provider=options["provider"],
            attention_policy=options["policy"],
            gold_checks=gold,
            max_pasted_share=options["max_pasted_share"],
            min_competence=options["min_competence"],
            kappa_threshold=options["kappa_threshold"],
            kappa_weighting=options["kappa_weighting"],
            layout_seed=options["layout_seed"],
            **self._kind_settings(options),
        )

    def _kind_settings(self, options):
        """The task type and the settings only its kind reads (`own_settings`: a pairwise survey's
        pairs, ties and position and repeat rules; a writing survey's system, which the kind requires
        as the survey page does), from the options that give them."""
        given = {
            **options,
            "allow_tie": not options["no_tie"],
            "write_system_name": options["system_name"].strip(),
            "reference_llm_systems": options["reference_llm_systems"].strip(),
        }
        own = kind_named(options["task_type"]).own_settings
        return {"task_type": options["task_type"], **{name: given[name] for name in own if name in given}}

    def _gold(self, path):
        checks = []
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except OSError as error:
            raise CommandError(f"Cannot read {path}: {error}") from None
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                checks.append(
                    {
                        "turns": record.get("context", []),
                        "response_text": record["response"],
                        "accepted_scores": record["accepted_scores"],
                    }
                )
            except (ValueError, KeyError, AttributeError) as error:
                raise CommandError(f"{path} line {number}: {error!r}") from None
        return checks
