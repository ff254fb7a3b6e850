"""The datasheet as Markdown, JSON and LaTeX, and the methods paragraph that states its figures
(pure: takes `annotation.services.datasheet.datasheet`'s dict)."""

import json

from annotation.services.text.latex import latex_escape

TO_FILL = "TO FILL IN (RateLab cannot know this)"


def _num(value, digits=2):
    if value is None:
        return "n/a"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def methods_sentences(sheet):
    """The methods paragraph as plain sentences (the same figures as the datasheet's)."""
    f = sheet["figures"]
    raters, pay, consent, questions = f["raters_per_item"], f["pay"], f["consent"], f["questionnaires"]
    systems = f["systems"]
    out = [
        f"We evaluated {len(systems)} system{'s' if len(systems) != 1 else ''} ({', '.join(systems)}) on "
        f"{f['items']} items drawn from the {f['dataset']} dataset ({f['dataset_contexts']} contexts).",
        f"The task ({f['task_type'].lower()}) was run on {f['platform']} with RateLab: {f['hits']} tasks of "
        f"{f['contexts_per_hit']} contexts, each planned for {f['assignments_per_hit']} evaluators.",
        f"{f['evaluators']} evaluators gave {f['judgements']} judgements; each item was judged by "
        f"{_num(raters['mean'])} evaluators on average (min {_num(raters['min'])}, max {_num(raters['max'])}).",
    ]
    if pay:
        currency = pay["currency"] or "(platform currency)"
        sentence = f"Evaluators were paid {pay['reward']:.2f} {currency} per {pay['per']}"
        if pay["median_seconds"]:
            sentence += f"; the median task took {pay['median_seconds'] / 60:.1f} minutes"
        if pay["hourly"] is not None:
            sentence += f", about {pay['hourly']:.2f} {currency} per hour"
        out.append(sentence + ".")
    out.append(
        f"Each task held {f['attention_checks_per_hit']} attention check(s); {f['checks_failed']} of "
        f"{f['checks_answered']} check answers failed. {f['excluded']} evaluators were excluded, leaving "
        f"{_num(f['judgements_accepted'])} of {f['judgements']} judgements."
    )
    if f["layout"]["seed"] is not None:
        out.append(
            f"Tasks were laid out from the seed “{f['layout']['seed']}”, so the same data and settings lay them "
            "out again the same way."
        )
    if f["alpha"] is not None:
        out.append(
            f"Inter-annotator agreement was Krippendorff's alpha = {f['alpha']:.3f} on the kept judgements "
            f"(median pairwise Cohen's kappa {_num(f['median_kappa'], 3)})."
        )
    if consent["asked"]:
        out.append(
            f"Before any task, participants read an information sheet and gave informed consent (version "
            f"{consent['version']}; {consent['accepted']} agreed, {consent['declined']} declined "
            "and were given no work)."
        )
    if questions["pre_questions"] or questions["post_questions"]:
        out.append(
            f"They answered {questions['pre_questions']} questions before and {questions['post_questions']} after the "
            "tasks, each with a “prefer not to say” option."
        )
    return out


def to_json(sheet):
    return json.dumps({**sheet, "methods": " ".join(methods_sentences(sheet))}, indent=2, ensure_ascii=False) + "\n"


def to_markdown(sheet):
    lines = [f"# Human Evaluation Datasheet (HEDS {sheet['heds_version']}): {sheet['survey']}", ""]
    lines.append("Fields marked **TO FILL IN** are ones RateLab cannot know: the researcher completes them.")
    for section in sheet["sections"]:
        lines += ["", f"## {section['title']}", ""]
        for field in section["fields"]:
            value = field["value"] if field["value"] is not None else f"**{TO_FILL}**"
            lines.append(f"- **{field['question']}** ({field['id']}): {value}")
    lines += ["", "## Methods paragraph", "", " ".join(methods_sentences(sheet)), ""]
    return "\n".join(lines)


def to_latex(sheet):
    """The methods paragraph, then the datasheet as a description list (fields to fill in marked)."""
    lines = [
        f"% Methods paragraph and HEDS {sheet['heds_version']} datasheet for survey {latex_escape(sheet['survey'])}, "
        "written by RateLab",
        r"\paragraph{Human evaluation.}",
        latex_escape(" ".join(methods_sentences(sheet)))
        .replace("alpha =", r"$\alpha$ =")
        .replace("kappa", r"$\kappa$"),
        "",
    ]
    for section in sheet["sections"]:
        lines.append(rf"\subsubsection*{{{latex_escape(section['title'])}}}")
        lines.append(r"\begin{description}")
        for field in section["fields"]:
            value = latex_escape(field["value"]) if field["value"] is not None else r"\textbf{" + TO_FILL + "}"
            lines.append(rf"  \item[{latex_escape(field['question'])}] {value}")
        lines.append(r"\end{description}")
    return "\n".join(lines) + "\n"


RENDERERS = {"md": to_markdown, "json": to_json, "latex": to_latex}
