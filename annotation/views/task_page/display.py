"""What the annotator page shows for one HIT, and where its item HTML comes from.

Shared by the local task page and the Mechanical Turk frame, which render the same include
(templates/annotation/task/_items.html) from `items.hit_blocks`. Only texts and HITItem ids
reach the page: never system names, response ids or references.
"""

import hashlib

from django.core.cache import cache
from django.utils.safestring import mark_safe

from annotation.kinds.registry import kind_for
from annotation.services.assignments import assignment_items
from annotation.views.task_page.items import fields_count, hit_blocks, items_html
from annotation.views.task_page.stored import hit_page_store, page_holds_for, page_version, stored_page
from annotation.views.task_page.wording import task_wording

ITEMS_CACHE_SECONDS = 600


def _items_cache_key(survey, hit, items=None):
    # The survey's random token and the HIT's creation time keep a key from ever meaning another
    # HIT, even where a database reuses the ids of deleted rows (SQLite); the page version keeps a
    # shared cache (Redis) from serving HTML of the code before a deploy. `items` None: all of them.
    shown = "all" if items is None else hashlib.sha1(",".join(str(item.pk) for item in items).encode()).hexdigest()
    return f"annotation:hit-items:{page_version()}:{survey.token}:{hit.pk}:{hit.created_at.timestamp()}:{shown}"


def _from_cache(context, key):
    """Fill `context` from the item HTML cached under `key`; whether there was any."""
    cached = cache.get(key)
    if cached:
        context.update(items_html=mark_safe(cached["html"]), n_fields=cached["n_fields"], n_items=cached["n_items"])
    return bool(cached)


def task_context(
    *,
    survey,
    assignment=None,
    hit=None,
    preview=False,
    submit_url="",
    progress=None,
    previous=None,
    error="",
    missing=(),
):
    """Template context for templates/annotation/task/hit.html (and the _items.html include).

    A blank page's item HTML comes from, in turn: this process's cache (an "all" key for a HIT
    without overlap items, looked up before anything is read); the HIT's stored page; or a render,
    which is cached per (HIT, items shown) and, when it shows all the HIT's items, stored for every
    process. Pages with answers to keep (after a refused submission) and previews are rendered
    afresh; `missing` (item ids a refused submission left out) marks those items on such a page.
    """
    context = {
        "survey": survey,
        "assignment": assignment,
        "preview": preview,
        "submit_url": submit_url,
        "progress": progress,
        # The kind's keyboard hint (None: none) and page script (hit.html).
        "kind_hint_template": kind_for(survey).hint_template,
        "kind_script": kind_for(survey).page_script,
        "kind_extra_scripts": kind_for(survey).page_extra_scripts,
        "wording": task_wording(survey),
        "error": error,
        "items_html": None,
    }
    cacheable = assignment is not None and not previous and not preview and not missing
    page = None
    if cacheable:
        if _from_cache(context, _items_cache_key(survey, assignment.hit)):
            return context
        page = stored_page(assignment.hit)
        if page is not None and page_holds_for(page, assignment):
            context.update(items_html=mark_safe(page.html), n_fields=page.n_fields, n_items=page.n_items)
            return context
    # By position alone: the default order (hit, position) joins the HIT and its survey to sort one HIT.
    hit_items = list(
        (hit or assignment.hit)
        .items.select_related("context", "response", "response_b", "attention_check")
        .order_by("position")
    )
    items = hit_items if assignment is None else assignment_items(assignment=assignment, hit_items=hit_items)
    cache_key = None
    if cacheable:
        # Only a HIT without overlap items looks the same to every annotator.
        whole = not any(item.is_overlap for item in hit_items)
        cache_key = _items_cache_key(survey, assignment.hit, None if whole else items)
        if not whole and _from_cache(context, cache_key):  # a whole HIT's key was looked up above
            return context
    blocks = hit_blocks(survey=survey, items=items, previous=previous, missing=missing)
    n_fields = fields_count(blocks)
    context.update(blocks=blocks, n_fields=n_fields, n_items=len(items))
    if cache_key:
        # Rendered by our own template from escaped values, so it is safe to mark safe on the way back.
        html = items_html(blocks)
        if page is None and len(items) == len(hit_items):
            # The blank page every annotator new to the survey sees, and none of the current
            # version is stored (the launch's render had not reached this HIT, or a deploy changed
            # the version): keep it for all processes.
            hit_page_store(hit=assignment.hit, html=html, n_fields=n_fields, n_items=len(items), has_overlap=not whole)
        cache.set(cache_key, {"html": html, "n_fields": n_fields, "n_items": len(items)}, ITEMS_CACHE_SECONDS)
        context["items_html"] = mark_safe(html)
    return context
