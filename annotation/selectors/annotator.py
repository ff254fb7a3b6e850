"""The annotator's side: the survey behind a link, the assignment behind a page, and the work left."""

from django.db import connection

from annotation.models import HIT, Annotator, Assignment, Survey
from annotation.selectors.raw_rows import RowReader, columns


def _finished(*, survey_id, annotator_id):
    return Assignment.objects.filter(
        hit__survey_id=survey_id, annotator_id=annotator_id, status__in=Assignment.FINISHED
    )


def survey_for_link(*, token):
    """The survey a shareable link names, or None.

    One read by the unique token, written out: every annotator's arrival starts here, and the
    ORM's query building costs more than the query (`.raw()` still applies the database's value
    converters, so the row reads the same on every backend).
    """
    table = connection.ops.quote_name(Survey._meta.db_table)
    return next(iter(Survey.objects.raw(f"SELECT * FROM {table} WHERE token = %s", [token])), None)


def assignment_for_page(*, token, progress=True):
    """The assignment behind an annotator's link, with its survey and annotator, or None.

    With `progress`, annotated with `hits_done`, how many HITs of the survey its annotator has
    finished (for the page's "HIT n of at most m"), and `survey_hits`, how many HITs the survey has
    ("of at most m" is never more than that, F11), so showing the page needs one query for all.
    A submission leaves them out: it only shows a page when it is refused (`hits_done`).

    Written out (raw_rows.py): every submission and task page starts here, and the ORM built this
    four-table join with its subqueries for longer than the database ran it.
    """
    quote = connection.ops.quote_name
    slots, hits, surveys, people = (quote(m._meta.db_table) for m in (Assignment, HIT, Survey, Annotator))
    counts, params = "", []
    if progress:
        finished = ", ".join(["%s"] * len(Assignment.FINISHED))
        counts = f""",
            (SELECT COUNT(*) FROM {slots} f JOIN {hits} fh ON fh.id = f.hit_id
             WHERE fh.survey_id = h.survey_id AND f.annotator_id = a.annotator_id AND f.status IN ({finished})),
            (SELECT COUNT(*) FROM {hits} sh WHERE sh.survey_id = h.survey_id)"""
        params = [str(status) for status in Assignment.FINISHED]
    sql = f"""SELECT {columns("a", Assignment)}, {columns("h", HIT)}, {columns("s", Survey)}, {columns("w", Annotator)}
        {counts}
        FROM {slots} a JOIN {hits} h ON h.id = a.hit_id JOIN {surveys} s ON s.id = h.survey_id
        LEFT JOIN {people} w ON w.id = a.annotator_id
        WHERE a.token = %s"""
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, token])
        row = cursor.fetchone()
    if row is None:
        return None
    reader = RowReader([Assignment, HIT, Survey, Annotator])
    assignment, hit, survey, annotator = reader.read(row)
    hit.survey = survey
    assignment.hit, assignment.annotator = hit, annotator
    if progress:
        assignment.hits_done, assignment.survey_hits = (int(n) for n in reader.extra(row))
    return assignment


def handed_in_work(*, survey, annotator):
    """Whether the annotator finished at least one HIT of the survey: what earns a completion code."""
    return _finished(survey_id=survey.pk, annotator_id=annotator.pk).exists()


def hits_done(*, assignment):
    """How many HITs of its survey the assignment's annotator has finished."""
    return hits_finished(survey_id=assignment.hit.survey_id, annotator_id=assignment.annotator_id)


def hits_finished(*, survey_id, annotator_id):
    """How many HITs of the survey the annotator has finished."""
    return _finished(survey_id=survey_id, annotator_id=annotator_id).count()


def work_left_for(*, assignment):
    """Whether the assignment's annotator could take another HIT of its survey (see `open_hit_left`)."""
    return open_hit_left(survey_id=assignment.hit.survey_id, annotator_id=assignment.annotator_id)


def open_hit_left(*, survey_id, annotator_id):
    """Whether the annotator could take another HIT of the survey: an open slot on a HIT they have
    not held (the claim's own rule, services/claims.py `_candidates`)."""
    held = Assignment.objects.filter(hit__survey_id=survey_id, annotator_id=annotator_id)
    return (
        Assignment.objects.filter(hit__survey_id=survey_id, status=Assignment.Status.OPEN)
        .exclude(hit_id__in=held.values("hit_id"))
        .exists()
    )
