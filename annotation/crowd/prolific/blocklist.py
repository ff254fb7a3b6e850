"""A researcher's block list, carried to their later Prolific studies through a participant group.

Prolific's participant groups are saved lists of participant ids; a study created with a
`participant_group_blocklist` filter on a group is hidden from every member, and members added
later are excluded from studies already published with the filter
(https://docs.prolific.com/api-reference/participant-groups; the filter shape
`{"filter_id": ..., "selected_values": [...]}` is that of
https://docs.prolific.com/api-reference/filters).

Blocking a participant here does three things, each idempotent: their work in this survey is
excluded from analysis (a quality-control decision the researcher can see and undo), a RateLab block
refuses them work in any later survey of the researcher, and they join the researcher's group on Prolific.
"""

from django.conf import settings
from django.db import transaction

from annotation.crowd.base import ProviderError
from annotation.crowd.blocks import block_for_owner
from annotation.models import ProlificBlockList
from annotation.quality.services import exclusion_override

BLOCKLIST_FILTER = "participant_group_blocklist"


def block_list_filters(owner):
    """The `filters` entry a new study of `owner` carries, or [] while they have no group yet."""
    row = ProlificBlockList.objects.filter(owner=owner).exclude(group_id="").first()
    if row is None:
        return []
    return [{"filter_id": BLOCKLIST_FILTER, "selected_values": [row.group_id]}]


def group_name(owner):
    """The owner's group name on Prolific: one per researcher, so a lost creation can be found again.

    The user's id comes first, so that two long usernames cut at 100 characters stay apart.
    """
    return f"RateLab block list #{owner.pk} ({owner.get_username()})"[:100]


def _group_add(client, owner, participant_id):
    """Put `participant_id` in the owner's group, creating the group (once) with them in it.

    A creation whose answer was lost may still have made the group, so the workspace's groups are
    looked up by name before creating one: retrying a block never leaves two groups.
    """
    with transaction.atomic():
        row, _ = ProlificBlockList.objects.select_for_update().get_or_create(owner=owner)
        if not row.group_id:
            workspace = settings.PROLIFIC_WORKSPACE_ID
            if not workspace:
                raise ProviderError(
                    "Set PROLIFIC_WORKSPACE_ID (Prolific: Workspaces, the workspace's id) to keep a block list on "
                    "Prolific; the participant is blocked in RateLab meanwhile."
                )
            name = group_name(owner)
            found = [group["id"] for group in client.participant_groups(workspace) if group.get("name") == name]
            if found:
                group_id = sorted(found)[0]
                client.add_to_participant_group(group_id, [participant_id])
            else:
                group_id = client.create_participant_group(
                    name=name,
                    workspace_id=workspace,
                    description="Participants blocked from later studies by RateLab.",
                    participant_ids=[participant_id],
                )["id"]
            ProlificBlockList.objects.filter(pk=row.pk).update(group_id=group_id)
            return group_id
    client.add_to_participant_group(row.group_id, [participant_id])
    return row.group_id


def participant_block(*, client, submission, reason, user):
    """Exclude the participant's work in this survey, block them in RateLab and on Prolific.

    Only a participant Prolific itself listed in this study (a confirmed submission) can be
    blocked: a PROLIFIC_PID typed into a URL proves nothing. Returns the Prolific group id.
    """
    if not submission.confirmed:
        raise ProviderError("Prolific has not confirmed this participant's submission: sync before blocking them.")
    reason = (reason or "").strip()
    if not reason:
        raise ProviderError("Say why the participant is blocked (kept with the exclusion and the block).")
    survey = submission.study.survey
    if survey.owner_id is None:
        raise ProviderError("This survey has no owner, so there is no researcher's block list to add them to.")
    exclusion_override(survey=survey, annotator=submission.annotator, excluded=True, note=reason, user=user)
    block_for_owner(annotator=submission.annotator, owner=survey.owner, reason=reason)
    return _group_add(client, survey.owner, submission.participant_id)
