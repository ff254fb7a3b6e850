"""Stable per-dataset pseudonyms (A1, A2, ...) for the workers of any provider, for exports.

Scope: one dataset. A report or a ratings file may span the dataset's surveys, and the same worker
must carry the same pseudonym in all of them, so the numbering is per dataset, not per survey.

Order: by each worker's first rating in the dataset (the lowest rating id), so a worker keeps their
pseudonym from one export to the next while work comes in: a newcomer's first rating is always
later than everyone else's, so they are appended (A7 after A6) and nobody is renumbered. Workers
with assignments but no rating yet come after the raters, by their first assignment; they are
renumbered once they rate (they are in no rating file or agreement table before that anyway).

`pseudonym_map` and `label_map` read the database; `scrub` is pure: it walks JSON-like data and
replaces every string equal to a worker label and every dict key equal to one, whatever the
provider; with `in_text=True` also every occurrence inside longer text (an exclusion note that
names a worker). In-text replacement is asked for only where people write notes: an imported file
may name its workers "1", "2", ... and "df = n - 3" elsewhere in a report must stay as it is.
"""

import re

from django.db.models import Min

from annotation.models import Assignment, PairwiseJudgement, Rating

PREFIX = "A"


def _workers_in_order(dataset):
    """`[(annotator_pk, provider, worker_id)]` in pseudonym order (three queries)."""
    raters = (
        Rating.objects.filter(survey__dataset=dataset)
        .values("annotator_id", "annotator__provider", "annotator__worker_id")
        .annotate(first=Min("pk"))
        .order_by("first", "annotator_id")
        .values_list("annotator_id", "annotator__provider", "annotator__worker_id")
    )
    holders = (
        Assignment.objects.filter(hit__survey__dataset=dataset, annotator__isnull=False)
        .values("annotator_id", "annotator__provider", "annotator__worker_id")
        .annotate(first=Min("pk"))
        .order_by("first", "annotator_id")
        .values_list("annotator_id", "annotator__provider", "annotator__worker_id")
    )
    # Pairwise judges (imported ones hold no assignment) come after the raters, in order of first judgement.
    judges = (
        PairwiseJudgement.objects.filter(survey__dataset=dataset)
        .values("annotator_id", "annotator__provider", "annotator__worker_id")
        .annotate(first=Min("pk"))
        .order_by("first", "annotator_id")
        .values_list("annotator_id", "annotator__provider", "annotator__worker_id")
    )
    ordered = list(raters)
    seen = {row[0] for row in ordered}
    for row in [*judges, *holders]:
        if row[0] not in seen:
            ordered.append(row)
            seen.add(row[0])
    return ordered


def pseudonym_map(*, dataset):
    """`{annotator_pk: "A<n>"}` for everyone who rated in, or holds an assignment of, `dataset`."""
    return worker_pseudonyms(dataset=dataset)[0]


def label_map(*, dataset):
    """`{label: pseudonym}` for every form a worker is written in: the bare worker id, and
    `provider:worker_id` (quality control's label when two providers share a worker id)."""
    return worker_pseudonyms(dataset=dataset)[1]


def worker_pseudonyms(*, dataset):
    """`({annotator_pk: pseudonym}, {label: pseudonym})`: `pseudonym_map` and `label_map` from one reading."""
    by_pk, labels = {}, {}
    for n, (pk, provider, worker) in enumerate(_workers_in_order(dataset), start=1):
        by_pk[pk] = labels[f"{provider}:{worker}"] = f"{PREFIX}{n}"
        # A worker id shared by two providers: the bare id keeps the first (lowest) pseudonym;
        # quality control labels such workers provider:worker_id, which is exact.
        labels.setdefault(worker, f"{PREFIX}{n}")
    return by_pk, labels


def _pattern(labels):
    # Longest first, so `mturk:W1` is replaced whole before `W1` could match inside it; a label
    # counts only as a whole token (not inside a longer id or word).
    names = sorted(labels, key=len, reverse=True)
    alternatives = "|".join(re.escape(name) for name in names)
    return re.compile(rf"(?<![\w:-])(?:{alternatives})(?![\w-])")


def scrub(value, labels, *, in_text=False):
    """`value` (JSON-like) with every worker label replaced by its pseudonym."""
    if not labels:
        return value
    return _walk(value, labels, _pattern(labels) if in_text else None)


def scrub_notes(value, labels):
    """`value` (a quality report, decision rows) with worker labels replaced exactly everywhere,
    and inside the free text people write: notes, and the reasons of manual decisions."""
    if not labels:
        return value
    return _walk_notes(value, labels, _pattern(labels))


def scrub_report(data, labels):
    """A report's data with worker labels replaced: exactly everywhere, and inside the free text of
    quality control's agreement section too (researchers' notes and the reasons of their manual
    decisions). The rules' own reasons ("mean kappa 0.1 over 2 pairs, below 0.2") are not free
    text: with workers named 1, 2, 3 (as imported files often name them) their numbers would be
    taken for workers."""
    if not isinstance(data, dict) or not labels:
        return scrub(data, labels)
    pattern = _pattern(labels)
    # Each section walked once: the agreement section (most of a large report's bytes) looking for
    # free text, the others by exact match only.
    return {
        _walk(key, labels, None): _walk_notes(value, labels, pattern)
        if key == "agreement"
        else _walk(value, labels, None)
        for key, value in data.items()
    }


def _walk_notes(value, labels, pattern, *, free_text=False):
    """`_walk` by exact match, and by `pattern` inside the strings that are people's free text."""
    if isinstance(value, str):
        if value in labels:
            return labels[value]
        return pattern.sub(lambda match: labels[match.group(0)], value) if free_text else value
    if isinstance(value, dict):
        manual = value.get("rule") == "manual"
        return {
            _walk(key, labels, None): _walk_notes(
                item, labels, pattern, free_text=key == "note" or (manual and key == "detail")
            )
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [_walk_notes(item, labels, pattern, free_text=free_text) for item in value]
    return value


def _walk(value, labels, pattern):
    if isinstance(value, str):
        if value in labels:
            return labels[value]
        return pattern.sub(lambda match: labels[match.group(0)], value) if pattern else value
    if isinstance(value, dict):
        return {_walk(key, labels, pattern): _walk(item, labels, pattern) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_walk(item, labels, pattern) for item in value]
    return value


# What a page says for a worker who has no pseudonym: one who opened a study link but holds no work
# in the dataset (the numbering counts raters, judges and assignment holders only).
NO_PSEUDONYM = "a participant with no work yet"


class WorkerNames:
    """How researcher pages name a study's workers for one reader: by their real ids (`real=True`,
    the study's owner) or by the dataset's pseudonyms (everyone else who may read the study).

    Built by `annotation.selectors.worker_names`; the pseudonyms are read once, on first use, so the
    owner's pages make no query for them."""

    def __init__(self, *, dataset=None):
        self.real = dataset is None
        self._dataset = dataset
        self._maps = None

    def _pseudonyms(self):
        if self._maps is None:
            self._maps = worker_pseudonyms(dataset=self._dataset)
        return self._maps

    def of(self, annotator):
        """The name of one `Annotator`."""
        if self.real:
            return annotator.worker_id
        return self._pseudonyms()[0].get(annotator.pk, NO_PSEUDONYM)

    def ordered(self, rows, *, annotator_of):
        """`rows` (listed by real id) in the order this reader may see: unchanged for the owner,
        else by pseudonym number, those without one last, so the order tells nothing of the ids."""
        if self.real:
            return list(rows)
        by_pk = self._pseudonyms()[0]

        def number(row):
            pseudonym = by_pk.get(annotator_of(row).pk)
            return (0, int(pseudonym[len(PREFIX) :])) if pseudonym else (1, 0)

        return sorted(rows, key=number)

    def scrub(self, value):
        """Report-like data (quality report, decision history) as this reader may see it."""
        return value if self.real else scrub_notes(value, self._pseudonyms()[1])

    def text(self, text):
        """A person's free text (a review's reason) with every worker it names replaced."""
        return text if self.real else scrub(text, self._pseudonyms()[1], in_text=True)
