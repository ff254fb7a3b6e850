"""What a rating task's page asks of each reply: every question on its scale, labelled at its ends."""

from annotation.models import Aspect
from annotation.services.text.aspect_details import scale_ends


def rating_scales(survey):
    """The survey's rating scales as the blocks show them: each question with its choices and the
    labels of its ends."""
    aspects = []
    # Ordered here: the model's default order would join the survey to sort by it, for one survey.
    for aspect in survey.aspects.order_by("position"):
        # An extra aspect without labels of its own reads 1 = Poor · 5 = Excellent, as the overall
        # question reads its stored ones: never a bare scale.
        extra = aspect.key != Aspect.OVERALL
        labels = scale_ends(aspect.scale_labels, aspect.scale_min, aspect.scale_max, default=extra)
        aspects.append(
            {
                "key": aspect.key,
                "question": aspect.question,
                "definition": aspect.definition,
                # Values as text: they are compared with submitted ones and printed, never computed with.
                "choices": [{"value": str(v), "label": labels.get(str(v), "")} for v in aspect.values],
                "low": labels.get(str(aspect.scale_min), ""),
                "high": labels.get(str(aspect.scale_max), ""),
            }
        )
    aspects.sort(key=lambda a: a["key"] != Aspect.OVERALL)
    return aspects
