"""The writing survey's reference LLM (issue 40): the dataset systems whose responses are an LLM's
replies to the same contexts, one system per sample, named in `Survey.reference_llm_systems`."""

from annotation.models import Response


def reference_llm_names(survey):
    """The named systems, in the order given, each once (blank names dropped)."""
    names = [name.strip() for name in (survey.reference_llm_systems or "").split(",")]
    return list(dict.fromkeys(name for name in names if name))


def reference_llm_problem(survey):
    """Why the survey's reference LLM systems cannot be used (a name that is not a system of its dataset),
    or None."""
    names = reference_llm_names(survey)
    if not names:
        return None
    known = set(survey.dataset.systems.values_list("name", flat=True)) if survey.dataset_id else set()
    missing = [name for name in names if name not in known]
    if missing:
        return (
            f"Reference LLM systems {', '.join(repr(n) for n in missing)} are not systems of the dataset "
            f"(its systems: {', '.join(sorted(known)) or 'none'})."
        )
    if survey.write_system_name and survey.write_system_name in names:
        return "The reference LLM cannot be the system the written replies join."
    return None


def reference_samples(survey, context_ids):
    """`{context id: [(system name, text)]}`: the reference LLM's samples for these contexts."""
    names = reference_llm_names(survey)
    if not names:
        return {}
    samples = {}
    rows = (
        Response.objects.filter(context__dataset=survey.dataset_id, system__name__in=names)
        .order_by("context_id", "system__name")
        .values_list("context_id", "system__name", "text")
    )
    wanted = set(context_ids)
    for context_id, name, text in rows:
        if context_id in wanted and (text or "").strip():
            samples.setdefault(context_id, []).append((name, text))
    return samples
