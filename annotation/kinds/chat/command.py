"""`create_survey --task-type chat`: the chat's own options, and the survey made from them."""

from annotation.kinds.chat.setup import OPENINGS, chat_survey_create


def add_chat_arguments(parser):
    parser.add_argument("--chat-systems", default="", help="chat: your chat systems' names, comma-separated.")
    parser.add_argument("--min-turns", type=int, default=3, help="chat: annotator messages before it may end.")
    parser.add_argument("--max-turns", type=int, default=None, help="chat: annotator messages at most.")
    parser.add_argument("--conversations-per-system", type=int, default=5, help="chat: conversations per system.")
    parser.add_argument("--opening", default="annotator", choices=OPENINGS, help="chat: who writes first.")
    parser.add_argument("--seed-text", default="", help="chat: a topic or persona shown to the annotator.")
    parser.add_argument(
        "--turn-scale",
        action="append",
        default=[],
        metavar="KEY[=QUESTION]",
        help="chat: a 1-5 rating under each of the bot's replies (repeat for more).",
    )
    effort = "chat, effort rule (off unless given): leave out of analysis a chat "
    parser.add_argument(
        "--effort-max-short-share",
        type=float,
        default=None,
        help=effort + "more than this share of whose messages have fewer than 3 words.",
    )
    parser.add_argument(
        "--effort-max-pasted-share",
        type=float,
        default=None,
        help=effort + "more than this share of whose messages were mostly pasted.",
    )
    parser.add_argument(
        "--effort-max-idle-seconds",
        type=float,
        default=None,
        help=effort + "with a longer gap without typing while a message was written.",
    )


def chat_survey_from_options(*, dataset, owner, options):
    return chat_survey_create(
        dataset=dataset,
        name=options["name"],
        owner=owner,
        chat_systems=[s.strip() for s in options["chat_systems"].split(",") if s.strip()],
        min_turns=options["min_turns"],
        max_turns=options["max_turns"],
        conversations_per_system=options["conversations_per_system"],
        opening=options["opening"],
        seed_text=options["seed_text"],
        turn_scales=options["turn_scale"],
        effort_max_short_share=options["effort_max_short_share"],
        effort_max_pasted_share=options["effort_max_pasted_share"],
        effort_max_idle_seconds=options["effort_max_idle_seconds"],
        aspects=[a.strip() for a in options["aspects"].split(",") if a.strip()],
        assignments_per_hit=1,
        max_hits_per_annotator=options["max_hits"],
        provider=options["provider"],
        attention_policy=options["policy"],
        layout_seed=options["layout_seed"],
    )
