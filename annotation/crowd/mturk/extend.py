"""Adding assignments to published MTurk HITs (CreateAdditionalAssignmentsForHIT); no boto3 here.

Each HIT is extended all-or-nothing: MTurk is asked for the missing assignments with a token made of
(HIT, target count), and the HIT's local slots and `MTurkHIT.max_assignments` are written in the
same transaction as that answer (`annotation.services.extend` runs one transaction per HIT). A retry,
a double click or a resume after a failure half way sends the same token for the same target, and
MTurk answers a repeated token with an error naming it, which is read as "already done".
"""

from django.db.models import Count, Max
from django.utils import timezone

from annotation.crowd.base import ProviderError
from annotation.crowd.mturk import pure
from annotation.crowd.mturk.errors import MTurkRequestError
from annotation.models import HIT, Assignment
from annotation.models.mturk import MTurkHIT

# MTurk: a HIT created with fewer than 10 assignments cannot reach 10 or more
# (AWS.MechanicalTurk.InvalidMaximumAssignmentsIncrease); the 20% fee tier starts at 10.
ASSIGNMENT_LIMIT = 10


def extend_request_token(*, mturk_hit, target):
    return pure.request_token("extend", mturk_hit.mturk_id, target, "sandbox" if mturk_hit.sandbox else "live")


def refusal(*, mturk_hit, current, target, now):
    """Why MTurk would refuse to take this HIT from `current` to `target` assignments, or ''."""
    if current < ASSIGNMENT_LIMIT <= target:
        return (
            f"HIT {mturk_hit.mturk_id} has {current} assignments: MTurk cannot extend a HIT created with fewer "
            f"than {ASSIGNMENT_LIMIT} to {target} (10 or more). Add fewer ratings, or create a new survey."
        )
    if mturk_hit.expires_at is not None and mturk_hit.expires_at <= now:
        return (
            f"HIT {mturk_hit.mturk_id} expired on {mturk_hit.expires_at:%Y-%m-%d %H:%M} UTC: workers no longer see "
            "it, so added assignments would never be done. Extend its expiry on MTurk first, or create a new survey."
        )
    return ""


class MTurkExtendMixin:
    """`add_assignments` for MTurkProvider; the service calls `extend_hit` once per HIT."""

    can_add_assignments = True
    assignment_ceiling = ASSIGNMENT_LIMIT
    extends_hit_by_hit = True

    def hit_capacity(self, *, survey, hit):
        """Assignments the HIT takes now: MTurk's MaxAssignments as last accepted, or (not published)
        its slots. Not the highest slot number: the task page may open a slot past a returned one."""
        mturk_hit = MTurkHIT.objects.filter(hit=hit).select_related("hit__survey").first()
        if mturk_hit is not None:
            return mturk_hit.slot_limit
        return Assignment.objects.filter(hit=hit).count()

    def highest_capacity(self, *, survey):
        """The most assignments any HIT of the survey takes (above the survey's count: an extension
        stopped half way)."""
        published = MTurkHIT.objects.filter(hit__survey=survey).aggregate(top=Max("max_assignments"))["top"]
        unpublished = (
            HIT.objects.filter(survey=survey, mturk__isnull=True)
            .annotate(n=Count("assignments"))
            .aggregate(top=Max("n"))["top"]
        )
        return max(published or 0, unpublished or 0, survey.assignments_per_hit)

    def check_extension(self, *, survey, target):
        """Refuse before anything is sent when any published HIT cannot reach `target`."""
        now = timezone.now()
        for mturk_hit in MTurkHIT.objects.filter(hit__survey=survey).order_by("hit__position"):
            current = mturk_hit.max_assignments or survey.assignments_per_hit
            if current < target:
                reason = refusal(mturk_hit=mturk_hit, current=current, target=target, now=now)
                if reason:
                    raise ProviderError(f"Nothing was added. {reason}")

    def extension_cost(self, *, survey, per_hit, n_hits):
        """The added assignments' rewards and MTurk's fee on them: what the HITs cost at the new
        count less what they cost now (the fee rate follows the HIT's count, see pure.py)."""
        now = pure.cost_estimate(
            n_hits=n_hits, assignments_per_hit=survey.assignments_per_hit, reward_cents=survey.reward_cents
        )
        after = pure.cost_estimate(
            n_hits=n_hits, assignments_per_hit=survey.assignments_per_hit + per_hit, reward_cents=survey.reward_cents
        )
        rewards, fees = after["rewards_cents"] - now["rewards_cents"], after["fees_cents"] - now["fees_cents"]
        return {
            "total": f"${pure.dollars(rewards + fees)}",
            "lines": [
                f"{per_hit * n_hits:,} assignments × ${pure.dollars(survey.reward_cents)} reward = "
                f"${pure.dollars(rewards)}, plus MTurk's fee of {after['fee_rate']:.0%} (at least $0.01 an "
                f"assignment) ${pure.dollars(fees)}: ${pure.dollars(rewards + fees)} from your MTurk balance as "
                "the work is approved.",
            ],
        }

    def extend_hit(self, *, survey, hit, target):
        """Take one published HIT to `target` assignments on MTurk; unpublished HITs need nothing."""
        mturk_hit = MTurkHIT.objects.filter(hit=hit).first()
        if mturk_hit is None:
            return  # publishing creates it with the survey's (raised) assignments per HIT
        current = mturk_hit.max_assignments or survey.assignments_per_hit
        if current >= target:
            return
        reason = refusal(mturk_hit=mturk_hit, current=current, target=target, now=timezone.now())
        if reason:
            raise ProviderError(reason)
        token = extend_request_token(mturk_hit=mturk_hit, target=target)
        try:
            self._call(
                "create_additional_assignments_for_hit",
                HITId=mturk_hit.mturk_id,
                NumberOfAdditionalAssignments=target - current,
                UniqueRequestToken=token,
            )
        except MTurkRequestError as error:
            text = str(error).lower()
            if "uniquerequesttoken" not in text and "already exist" not in text:
                raise ProviderError(f"HIT {mturk_hit.mturk_id} was not extended: {error}") from error
            # The same token within 24 h: an earlier try was accepted and its answer lost.
        MTurkHIT.objects.filter(pk=mturk_hit.pk).update(max_assignments=target)

    def add_assignments(self, *, survey, per_hit):
        raise ProviderError("MTurk HITs are extended one by one through annotation.services.extend.")
