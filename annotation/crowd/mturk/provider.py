"""Amazon Mechanical Turk provider (boto3's `mturk` client). The only module that imports boto3.

Credentials come from boto3's standard chain (environment, shared profile, instance role); this
module never reads, stores or logs them. Everything written here is MTurk's own ids and statuses.
Every create call carries a UniqueRequestToken derived from stable ids, so a retried publish or
bonus never happens twice on MTurk's side; each HIT is recorded the moment MTurk answers, so a
publish that fails half way is finished by running it again.
"""

import logging

from django.conf import settings
from django.db import transaction
from django.urls import reverse

from annotation.crowd.base import CrowdProvider, ProviderError
from annotation.crowd.mturk import pure
from annotation.crowd.mturk.errors import MTurkRequestError, MTurkTransientError
from annotation.crowd.mturk.extend import MTurkExtendMixin
from annotation.crowd.mturk.review import MTurkReviewMixin
from annotation.crowd.mturk.sync import MTurkSyncMixin
from annotation.models import HIT
from annotation.models.mturk import (
    QUAL_APPROVAL_RATE,
    QUAL_LOCALE,
    QUAL_NUMBER_APPROVED,
    MTurkExclusionQualification,
    MTurkHIT,
    MTurkSettings,
)
from annotation.services.runtime.lazy_import import lazy_module
from annotation.views.task_page.wording import task_description, task_wording

# boto3 and botocore (about 0.2 s) load when MTurk is first called, not when the apps load: the
# URLconf and the task registry reach this module, and most processes never talk to MTurk.
boto3 = lazy_module("boto3")
botocore_config = lazy_module("botocore.config")
botocore_errors = lazy_module("botocore.exceptions")

logger = logging.getLogger(__name__)

REQUESTER_ENDPOINTS = {
    True: "https://mturk-requester-sandbox.us-east-1.amazonaws.com",
    False: "https://mturk-requester.us-east-1.amazonaws.com",
}
# Where a worker's browser posts the finished assignment (`turkSubmitTo`).
WORKER_SITES = {True: "https://workersandbox.mturk.com", False: "https://www.mturk.com"}
# Codes worth retrying later with backoff; anything else is a real refusal.
TRANSIENT_CODES = frozenset({"ThrottlingException", "ServiceUnavailable", "ServiceFault", "Throttling"})
EXCLUSION_QUALIFICATION_NAME = "RateLab exclusion"
PREVIEW_ASSIGNMENT_ID = "ASSIGNMENT_ID_NOT_AVAILABLE"
PAGE_SIZE = 100


def mturk_client(*, sandbox):
    """A boto3 client for the requester API; credentials from the standard boto3 chain."""
    return boto3.client(
        "mturk",
        region_name="us-east-1",
        endpoint_url=REQUESTER_ENDPOINTS[sandbox],
        config=botocore_config.Config(retries={"mode": "standard", "max_attempts": 3}),
    )


def settings_for(survey):
    """The survey's MTurk settings row, created with defaults drawn from the survey on first use."""
    wording = task_wording(survey)
    row, _ = MTurkSettings.objects.get_or_create(
        survey=survey,
        defaults={"title": f"{wording['title']} ({survey.name})"[:128], "description": task_description(survey)},
    )
    return row


def task_url(survey):
    """The https address of the survey's task page, which MTurk shows in its frame."""
    base = settings.PUBLIC_BASE_URL
    if not base.startswith("https://"):
        raise ProviderError("PUBLIC_BASE_URL must be the app's public https address to publish on MTurk.")
    return base + reverse("annotation:mturk_task", args=[survey.token])


def hit_request_token(*, survey, hit, sandbox):
    return pure.request_token("hit", survey.token, hit.pk, "sandbox" if sandbox else "live")


class MTurkProvider(MTurkSyncMixin, MTurkReviewMixin, MTurkExtendMixin, CrowdProvider):
    """Publishes here; sync, review and extension live in sync.py, review.py and extend.py (no boto3 there)."""

    name = "mturk"

    def __init__(self, *, sandbox=True, client=None):
        self.sandbox = sandbox
        self._client = client

    @classmethod
    def for_survey(cls, survey):
        return cls(sandbox=settings_for(survey).sandbox)

    @property
    def client(self):
        if self._client is None:
            self._client = mturk_client(sandbox=self.sandbox)
        return self._client

    # --- calls -----------------------------------------------------------------------
    def _call(self, operation, **params):
        """Call MTurk; botocore's errors become ProviderErrors whose messages hold no secret."""
        logger.info("mturk %s (%s)", operation, "sandbox" if self.sandbox else "live")
        try:
            return getattr(self.client, operation)(**params)
        except botocore_errors.ClientError as error:
            code = error.response.get("Error", {}).get("Code", "")
            message = error.response.get("Error", {}).get("Message", "")
            if code in TRANSIENT_CODES:
                raise MTurkTransientError(f"MTurk is busy ({code}); retry later.") from error
            raise MTurkRequestError(f"MTurk refused {operation}: {code}: {message}", code=code) from error
        except botocore_errors.NoCredentialsError:
            raise ProviderError(
                "No AWS credentials found: set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE."
            ) from None
        except botocore_errors.ConnectionError as error:
            raise MTurkTransientError(f"Could not reach MTurk ({type(error).__name__}).") from error
        except botocore_errors.BotoCoreError as error:
            raise ProviderError(f"MTurk call {operation} failed: {type(error).__name__}") from error

    def _pages(self, operation, key, **params):
        """Every item of a paged list call, following NextToken."""
        next_token = None
        while True:
            page_params = dict(params, MaxResults=PAGE_SIZE)
            if next_token:
                page_params["NextToken"] = next_token
            response = self._call(operation, **page_params)
            yield from response.get(key, [])
            next_token = response.get("NextToken")
            if not next_token or not response.get(key):
                return

    # --- money ----------------------------------------------------------------------
    def balance_cents(self):
        return pure.cents_from_dollars(self._call("get_account_balance")["AvailableBalance"])

    def cost_estimate(self, *, survey, pending_only=False):
        hits = survey.hits.all()
        if pending_only:
            hits = hits.filter(mturk__isnull=True)
        return pure.cost_estimate(
            n_hits=hits.count(), assignments_per_hit=survey.assignments_per_hit, reward_cents=survey.reward_cents
        )

    # --- publishing -----------------------------------------------------------------
    def exclusion_qualification_id(self):
        """The shared exclusion qualification of this endpoint; created once and its id kept."""
        row = MTurkExclusionQualification.objects.filter(sandbox=self.sandbox).first()
        if row:
            return row.qualification_type_id
        try:
            response = self._call(
                "create_qualification_type",
                Name=EXCLUSION_QUALIFICATION_NAME,
                Description="Workers excluded from RateLab rating studies (failed checks or low agreement).",
                Keywords="ratelab,exclusion",
                QualificationTypeStatus="Active",
            )
            qualification_id = response["QualificationType"]["QualificationTypeId"]
        except MTurkRequestError as error:
            # The name is unique per account: another deployment (or a lost row) created it already.
            qualification_id = self._find_qualification(EXCLUSION_QUALIFICATION_NAME)
            if not qualification_id:
                raise error
        row, _ = MTurkExclusionQualification.objects.get_or_create(
            sandbox=self.sandbox, defaults={"qualification_type_id": qualification_id}
        )
        return row.qualification_type_id

    def _find_qualification(self, name):
        for qualification in self._pages(
            "list_qualification_types",
            "QualificationTypes",
            Query=name,
            MustBeRequestable=False,
            MustBeOwnedByCaller=True,
        ):
            if qualification["Name"] == name:
                return qualification["QualificationTypeId"]
        return ""

    def qualification_requirements(self, mturk_settings):
        requirements = []
        locales = mturk_settings.locale_list
        if locales:
            requirements.append(
                {
                    "QualificationTypeId": QUAL_LOCALE,
                    "Comparator": "EqualTo" if len(locales) == 1 else "In",
                    "LocaleValues": [{"Country": code} for code in locales],
                    "ActionsGuarded": "Accept",
                }
            )
        if mturk_settings.min_approval_rate is not None:
            requirements.append(
                {
                    "QualificationTypeId": QUAL_APPROVAL_RATE,
                    "Comparator": "GreaterThanOrEqualTo",
                    "IntegerValues": [mturk_settings.min_approval_rate],
                    "ActionsGuarded": "Accept",
                }
            )
        if mturk_settings.min_approved_hits is not None:
            requirements.append(
                {
                    "QualificationTypeId": QUAL_NUMBER_APPROVED,
                    "Comparator": "GreaterThanOrEqualTo",
                    "IntegerValues": [mturk_settings.min_approved_hits],
                    "ActionsGuarded": "Accept",
                }
            )
        if mturk_settings.use_exclusion_qualification:
            requirements.append(
                {
                    "QualificationTypeId": mturk_settings.exclusion_qualification_id,
                    "Comparator": "DoesNotExist",
                    "ActionsGuarded": "DiscoverPreviewAndAccept",
                }
            )
        return requirements

    def publish(self, *, survey):
        """Create the survey's HITs that are not on MTurk yet; returns a summary dict."""
        mturk_settings = settings_for(survey)
        if mturk_settings.sandbox != self.sandbox:
            raise ProviderError("This provider talks to the other MTurk endpoint than the survey's settings.")
        pending = list(HIT.objects.filter(survey=survey, mturk__isnull=True).order_by("position"))
        question = pure.external_question_xml(url=task_url(survey), frame_height=mturk_settings.frame_height)
        pure.parse_external_question(question)  # never send MTurk a document its schema would refuse
        if not pending:
            return {"created": 0, "pending": 0, "hit_type_id": mturk_settings.hit_type_id}

        cost = self.cost_estimate(survey=survey, pending_only=True)
        balance = self.balance_cents()
        if balance < cost["total_cents"]:
            raise ProviderError(
                f"MTurk balance ${pure.dollars(balance)} is below the cost ${pure.dollars(cost['total_cents'])}."
            )
        if mturk_settings.use_exclusion_qualification:
            mturk_settings.exclusion_qualification_id = self.exclusion_qualification_id()
        # MTurk answers an identical CreateHITType with the same id, so this is safe to repeat.
        hit_type_id = self._call(
            "create_hit_type",
            Title=mturk_settings.title,
            Description=mturk_settings.description,
            Keywords=mturk_settings.keywords,
            Reward=pure.dollars(survey.reward_cents),
            AssignmentDurationInSeconds=survey.assignment_minutes * 60,
            AutoApprovalDelayInSeconds=mturk_settings.auto_approval_delay_seconds,
            QualificationRequirements=self.qualification_requirements(mturk_settings),
        )["HITTypeId"]
        mturk_settings.hit_type_id = hit_type_id
        mturk_settings.save(update_fields=["hit_type_id", "exclusion_qualification_id"])

        created = 0
        for hit in pending:
            self._publish_hit(
                survey=survey, hit=hit, hit_type_id=hit_type_id, question=question, mturk_settings=mturk_settings
            )
            created += 1
        return {"created": created, "pending": 0, "hit_type_id": hit_type_id}

    def _publish_hit(self, *, survey, hit, hit_type_id, question, mturk_settings):
        token = hit_request_token(survey=survey, hit=hit, sandbox=self.sandbox)
        try:
            response = self._call(
                "create_hit_with_hit_type",
                HITTypeId=hit_type_id,
                MaxAssignments=survey.assignments_per_hit,
                LifetimeInSeconds=mturk_settings.lifetime_seconds,
                Question=question,
                RequesterAnnotation=token,
                UniqueRequestToken=token,
            )
            created = response["HIT"]
        except MTurkRequestError as error:
            # MTurk made this HIT on an earlier try whose answer was lost: adopt it.
            created = self._find_hit(token=token, error=error)
        with transaction.atomic():
            MTurkHIT.objects.create(
                hit=hit,
                mturk_id=created["HITId"],
                hit_type_id=created.get("HITTypeId", hit_type_id),
                group_id=created.get("HITGroupId", ""),
                request_token=token,
                sandbox=self.sandbox,
                status=created.get("HITStatus", ""),
                max_assignments=created.get("MaxAssignments") or survey.assignments_per_hit,
                expires_at=created.get("Expiration"),
            )
            HIT.objects.filter(pk=hit.pk).update(external_id=created["HITId"])
        logger.info("mturk published HIT %s for survey %s", created["HITId"], survey.pk)

    def _find_hit(self, *, token, error):
        message = str(error)
        if "already exist" not in message.lower() and "uniquerequesttoken" not in message.lower():
            raise error
        match = pure.HIT_ID_RE.search(message.split(":", 1)[-1])
        if match:
            found = self._call("get_hit", HITId=match.group(1))["HIT"]
            if found.get("RequesterAnnotation", token) == token:
                return found
        for hit in self._pages("list_hits", "HITs"):
            if hit.get("RequesterAnnotation") == token:
                return hit
        raise error
