"""Each HIT's blank page (its items' HTML) rendered once and stored for every server process.

A HIT's items never change once it is launched, and its blank page is the same for every
annotator who has rated none of its overlap items elsewhere. When 50 annotators arrive at once,
each of a server's processes would otherwise render most HITs anew (reading the items, then the
radio loops): most of what such a burst costs.
"""

import collections
import functools
import hashlib
from pathlib import Path

from django.db import connection
from django.template.loader import get_template

from annotation.kinds.rating import gold_turns
from annotation.kinds.registry import all_kinds
from annotation.models import HIT, HITItem, HITPage
from annotation.views.task_page import items as task_items
from annotation.views.task_page.items import fields_count, hit_blocks, items_html, survey_scales

STORE_BATCH = 200


def _item_templates():
    """The templates that render a HIT's items: the shared one and every kind's choice template."""
    kinds = all_kinds()
    own = [name for kind in kinds for name in kind.block_templates]
    return ["annotation/task/_items.html", *dict.fromkeys([*(kind.choice_template for kind in kinds), *own])]


@functools.cache
def page_version():
    """A digest of what renders a HIT's items: a changed template or items.py is a new version.

    Pages of an older version are then ignored and rendered again, so a deploy never shows
    annotators HTML its own code would not produce.
    """
    digest = hashlib.sha1()
    for name in _item_templates():
        digest.update(Path(get_template(name).origin.name).read_bytes())
    digest.update(Path(task_items.__file__).read_bytes())
    digest.update(Path(gold_turns.__file__).read_bytes())  # how a gold check's turns are shown
    for kind in all_kinds():  # kinds that lay their pages out themselves
        for module in kind.page_modules:
            digest.update(Path(module.__file__).read_bytes())
    return digest.hexdigest()


StoredPage = collections.namedtuple("StoredPage", "html n_fields n_items has_overlap")


def stored_page(hit):
    """The HIT's stored page of the current version, or None.

    The claim may have read it already, as `select_related` would (cached on the HIT, None for
    none); otherwise one indexed read by primary key, written out: on the busiest path of the app
    the ORM's query building costs more than the query.
    """
    relation = HIT._meta.get_field("page")
    if relation.is_cached(hit):
        page = relation.get_cached_value(hit)  # `hit.page` would raise for a cached "none"
        if page is None or page.version != page_version():
            return None
        return StoredPage(page.html, page.n_fields, page.n_items, page.has_overlap)
    table, quote = HITPage._meta.db_table, connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT html, n_fields, n_items, has_overlap FROM {quote(table)} WHERE hit_id = %s AND version = %s",
            [hit.pk, page_version()],
        )
        row = cursor.fetchone()
    return None if row is None else StoredPage(*row)


def page_holds_for(page, assignment):
    """Whether `assignment`'s annotator sees the stored page as it is.

    A page with overlap items drops those its annotator rated elsewhere in the survey; the claim
    says when they are new to the survey (`first_in_survey`) and so have rated none.
    """
    return not page.has_overlap or getattr(assignment, "first_in_survey", False)


def hit_page_store(*, hit, html, n_fields, n_items, has_overlap):
    """Store one HIT's blank page, rendered elsewhere (by a live request that showed all its items)."""
    _store([_stored(hit, html, n_fields, n_items, has_overlap)])


def _stored(hit, html, n_fields, n_items, has_overlap):
    return HITPage(
        hit=hit, version=page_version(), html=html, n_fields=n_fields, n_items=n_items, has_overlap=has_overlap
    )


def _page_for(hit, items, scales):
    blocks = hit_blocks(survey=hit.survey, items=items, scales=scales)
    has_overlap = any(item.is_overlap for item in items)
    return _stored(hit, items_html(blocks), fields_count(blocks), len(items), has_overlap)


def _store(pages):
    """Insert the pages, or replace those of another version (two renderers may race: both write the same)."""
    HITPage.objects.bulk_create(
        pages,
        update_conflicts=True,
        unique_fields=["hit"],
        update_fields=["version", "html", "n_fields", "n_items", "has_overlap"],
    )


def hit_pages_render(*, survey):
    """Render and store the page of every HIT of `survey` that has none of the current version.

    Run after launch (a task queued by `survey_launch`); idempotent, so a retry or a second launch
    renders only what is missing. Items are read in one pass over the survey, in HIT order.
    Returns how many pages were written.
    """
    hits = {hit.pk: hit for hit in HIT.objects.filter(survey=survey).exclude(page__version=page_version())}
    if not hits:
        return 0
    scales = survey_scales(survey)
    for hit in hits.values():
        hit.survey = survey
    items = (
        HITItem.objects.filter(hit_id__in=list(hits))
        .select_related("context", "response", "response_b", "attention_check")
        .order_by("hit_id", "position")
    )
    pages, current, written = [], [], 0
    for item in items.iterator(chunk_size=2000):
        if current and current[-1].hit_id != item.hit_id:
            pages.append(_page_for(hits[current[-1].hit_id], current, scales))
            current = []
        current.append(item)
        if len(pages) >= STORE_BATCH:
            _store(pages)
            written, pages = written + len(pages), []
    if current:
        pages.append(_page_for(hits[current[-1].hit_id], current, scales))
    _store(pages)
    return written + len(pages)
