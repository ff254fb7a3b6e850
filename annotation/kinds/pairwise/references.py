"""A dataset's references as a pseudo-system, so that a pairwise study can put a system's reply
against the context's reference ("a system and a reference", issue 21; ACUTE-Eval's "vs human").

The pseudo-system (`System.is_reference`, named REFERENCE_SYSTEM_NAME) holds one Response per
context that has a reference: the text of its first reference (position 0), with the Reference's id
in `meta["reference_id"]`. Contexts without a reference get none, and pair planning skips a system
without a response to a context, so they are simply not compared with the reference. The default
managers of System and Response leave these rows out, so rating studies, metrics, ADEM, LLM rating
judges and the rating analyses never see them.
"""

from django.db import IntegrityError, transaction

from annotation.models import REFERENCE_SYSTEM_NAME, Reference, Response, System


def reference_system_ensure(*, dataset):
    """The dataset's reference pseudo-system, with a response for every context that has a
    reference. Idempotent: a second call creates nothing (and adds responses only for contexts
    given a reference since). Returns the System."""
    system = System.with_references.filter(dataset=dataset, is_reference=True).first()
    if system is None:
        try:
            with transaction.atomic():
                system = System.with_references.create(dataset=dataset, name=REFERENCE_SYSTEM_NAME, is_reference=True)
        except IntegrityError:  # made by a concurrent call a moment ago
            system = System.with_references.get(dataset=dataset, is_reference=True)
    have = set(Response.with_references.filter(system=system).values_list("context_id", flat=True))
    first = {}  # context id -> its first reference (lowest position; the importer numbers them from 0)
    rows = Reference.objects.filter(context__dataset=dataset).exclude(context_id__in=have)
    for reference_id, context_id, text in rows.order_by("context_id", "position").values_list(
        "pk", "context_id", "text"
    ):
        first.setdefault(context_id, (reference_id, text))
    missing = [
        Response(context_id=context_id, system=system, text=text, meta={"reference_id": reference_id})
        for context_id, (reference_id, text) in first.items()
    ]
    if missing:
        Response.with_references.bulk_create(missing, batch_size=2000, ignore_conflicts=True)
    return system


def dataset_has_references(*, dataset):
    return Reference.objects.filter(context__dataset=dataset).exists()
