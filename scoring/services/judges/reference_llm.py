"""A writing survey's reference LLM from a judge endpoint (issue 40): K samples of what the LLM writes
as the next turn of each context, stored once as responses of K systems of the dataset
(`<judge>-sample-1` ... `-K`) and named in the survey's `reference_llm_systems`, so the integrity
section compares written replies with them as with samples imported with the dataset.

Cached: a context that already has a sample under a system's name is not asked again, so a second run
sends only what is missing. Costed: the tokens each run used, priced with the judge's prices when it has
them. The endpoint is the judge's, checked as every judge run checks it (host rules, no redirects)."""

from dataclasses import dataclass, replace
from decimal import Decimal

from django.db import transaction

from annotation.kinds.registry import kind_for
from annotation.models import Context, Response, System
from scoring.judges.client import JudgeRequestFailed, judge_prompts_stream
from scoring.judges.prompts import format_context
from scoring.services.judges.registry import judge_settings

INSTRUCTION = (
    "You are taking part in the conversation below. Write the next turn: a reply that fits the conversation "
    "so far, as a person taking part in it would. Answer with the reply only."
)
MAX_SAMPLES = 10


@dataclass
class SamplingRun:
    systems: list
    asked: int = 0  # contexts sent to the endpoint this run
    cached: int = 0  # contexts that already had every sample
    stored: int = 0  # samples stored this run
    empty: int = 0  # samples the endpoint answered with no text (not stored)
    failed: int = 0  # contexts whose requests failed (nothing stored for them; a rerun asks again)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: Decimal | None = None


def sample_names(judge, samples):
    return [f"{judge.name}-sample-{k}" for k in range(1, samples + 1)]


def _messages(turns):
    return [{"role": "system", "content": INSTRUCTION}, {"role": "user", "content": format_context(turns)}]


def _cost(judge, run):
    prompt, completion = judge.price_per_million_prompt_tokens, judge.price_per_million_completion_tokens
    if prompt is None and completion is None:
        return None
    million = Decimal(1_000_000)
    return (Decimal(run.prompt_tokens) * (prompt or 0) + Decimal(run.completion_tokens) * (completion or 0)) / million


def sample_reference_llm(*, survey, judge, samples=3):
    """Ask `judge` for `samples` next turns of each of the survey's dataset contexts that lacks them;
    store them and name the systems in `survey.reference_llm_systems`. Returns a `SamplingRun`."""
    if not 1 <= samples <= MAX_SAMPLES:
        raise ValueError(f"samples must be between 1 and {MAX_SAMPLES}, not {samples}")
    if not kind_for(survey).writes_responses:
        raise ValueError(f"survey {survey.name!r} is not a writing survey: it has no replies to compare")
    settings = replace(judge_settings(judge), samples=samples)
    names = sample_names(judge, samples)
    systems = [System.objects.get_or_create(dataset=survey.dataset, name=name)[0] for name in names]
    have = set(Response.objects.filter(system__in=systems).values_list("context_id", "system_id"))
    contexts = list(Context.objects.filter(dataset=survey.dataset).order_by("position", "pk"))
    wanted = [c for c in contexts if any((c.pk, s.pk) not in have for s in systems)]
    run = SamplingRun(systems=names, cached=len(contexts) - len(wanted), asked=len(wanted))
    for batch in judge_prompts_stream(settings, [_messages(c.turns or []) for c in wanted], parse=lambda reply: reply):
        with transaction.atomic():  # each batch stored as it arrives: a killed run keeps what it paid for
            for index, verdict in batch:
                if isinstance(verdict, JudgeRequestFailed):
                    run.failed += 1
                    continue
                run.prompt_tokens += verdict.prompt_tokens
                run.completion_tokens += verdict.completion_tokens
                context = wanted[index]
                for system, text in zip(systems, verdict.replies, strict=False):
                    if not (text or "").strip():
                        run.empty += 1
                    elif (context.pk, system.pk) not in have:
                        Response.objects.create(context=context, system=system, text=text.strip())
                        run.stored += 1
    listed = [n.strip() for n in (survey.reference_llm_systems or "").split(",") if n.strip()]
    survey.reference_llm_systems = ",".join(dict.fromkeys([*listed, *names]))
    survey.save(update_fields=["reference_llm_systems"])
    run.cost = _cost(judge, run)
    return run
