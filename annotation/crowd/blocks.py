"""Blocks: RateLab refuses a blocked annotator work in the surveys of the researcher who blocked them.

A block belongs to that researcher (the row's `actor`). One researcher's verdict on a participant
does not keep them out of another researcher's studies, which the platform may list them for (a
Prolific block list is one researcher's participant group), so it must not turn them away there.
A block with no owner (made by an admin, or before blocks had one) applies to every survey.
MTurk's exclusion qualification is another matter: MTurk applies it to every HIT of the account.
"""

from django.db.models import Q

from annotation.models import ReviewAction


def block_for_owner(*, annotator, owner, reason):
    """Record (once) that `owner` blocked `annotator`; `owner` None blocks them everywhere."""
    return ReviewAction.objects.get_or_create(
        annotator=annotator, action=ReviewAction.Action.BLOCK, survey=None, actor=owner, defaults={"reason": reason}
    )[0]


def blocks_applying_to(owner_id):
    """The block rows that keep annotators out of the surveys of the researcher `owner_id`."""
    mine_or_everyone = Q(actor__isnull=True) if owner_id is None else Q(actor__isnull=True) | Q(actor_id=owner_id)
    return ReviewAction.objects.filter(mine_or_everyone, action=ReviewAction.Action.BLOCK)
