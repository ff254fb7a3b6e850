"""Prolific as a crowd provider: a survey is one study, its places the survey's assignment slots.

Participants arrive on RateLab's Prolific entry page with PROLIFIC_PID, STUDY_ID and SESSION_ID in
the URL and get work exactly as the built-in crowd hands it out (claims on POST). Those parameters
are typed into a URL and prove nothing: a participant's work counts, and can be approved, rejected
or paid a bonus, only once a sync (or a signed webhook) finds Prolific listing that SESSION_ID for
that participant in this study (`ProlificSubmission.confirmed`).
"""

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation.crowd.base import CrowdProvider, ProviderError
from annotation.crowd.blocks import block_for_owner
from annotation.crowd.prolific.api import PaymentOutcomeUnknown, ProlificClient
from annotation.crowd.prolific.blocklist import block_list_filters
from annotation.crowd.prolific.bonus import study_bonuses_reconcile
from annotation.crowd.prolific.codes import listed_code
from annotation.crowd.prolific.consent import no_consent_codes
from annotation.crowd.prolific.pay import currency_problem, floor_problem, money
from annotation.crowd.prolific.review import ProlificReviewMixin
from annotation.crowd.prolific.study import draft_prefix, entry_url, new_draft_tag, slot_count, study_settings
from annotation.crowd.prolific.submissions import apply_submission_status, measured_median_seconds
from annotation.models import ProlificStudy
from annotation.views.task_page.wording import task_description, task_wording


class ProlificProvider(ProlificReviewMixin, CrowdProvider):
    """Publishes and syncs here; approve, reject and bonus live in review.py."""

    name = "prolific"

    def __init__(self, *, client=None):
        self._client = client

    @classmethod
    def for_survey(cls, survey):
        return cls()

    @property
    def client(self):
        if self._client is None:
            self._client = ProlificClient()
        return self._client

    # --- study ------------------------------------------------------------------------------
    def study_body(self, survey, study):
        wording = task_wording(survey)
        checks = " Some items check that you read carefully." if survey.attention_checks_per_hit else ""
        body = {
            "name": f"{wording['title']} ({survey.name})"[:120],
            "internal_name": f"{draft_prefix(survey, study)} {survey.name}"[:200],
            "description": task_description(survey) + checks,
            "external_study_url": entry_url(survey),
            "prolific_id_option": "url_parameters",
            "completion_codes": [
                {"code": study.completed_code, "code_type": "COMPLETED", "actions": [{"action": "MANUALLY_REVIEW"}]},
                {
                    "code": study.failed_check_code,
                    "code_type": "FAILED_ATTENTION_CHECK",
                    "actions": [{"action": "MANUALLY_REVIEW"}],
                },
                *no_consent_codes(survey, study),
            ],
            "estimated_completion_time": study.estimated_minutes,
            "reward": study.reward_cents,
            "total_available_places": slot_count(survey),
            "device_compatibility": ["desktop", "tablet", "mobile"],
        }
        # The researcher's block list (a participant group) keeps blocked participants out.
        filters = block_list_filters(survey.owner) if survey.owner_id else []
        if filters:
            body["filters"] = filters
        return body

    def create(self, *, survey):
        """Create the study as a draft on Prolific (once); refuses a reward under the hourly floor.

        One survey has at most one draft, even when a launch dies mid-request. Before a launch
        takes the row's lock it counts itself in `draft_attempts` (committed, with the draft's
        tag; on PostgreSQL that UPDATE itself waits while another launch holds the row); it asks
        for the draft while holding the lock and saves the id in the same transaction (see
        `prepare`). A worker killed between the POST and that save leaves only
        the count behind, so a launch that holds the lock and finds more attempts than its own
        lists the account's studies and adopts the draft with this survey's tag before creating
        one (`_earlier_draft`). The first launch of a survey finds only itself and sends the POST
        straight away. A create whose answer was lost says so, and the next launch looks likewise."""
        study = study_settings(survey)
        if study.study_id:
            return study
        problem = floor_problem(study.reward_cents, study.estimated_minutes, study.currency)
        if problem:
            raise ProviderError(problem)
        self._check_workspace_currency(study)
        # Both committed before the lock is asked for, and so before any POST: a later launch
        # names the draft the same way and sees that this one may have sent it.
        ProlificStudy.objects.filter(pk=study.pk, draft_tag="").update(draft_tag=new_draft_tag())
        ProlificStudy.objects.filter(pk=study.pk).update(draft_attempts=F("draft_attempts") + 1)
        lost = False
        with transaction.atomic():
            study = ProlificStudy.objects.select_for_update().get(pk=study.pk)
            if study.study_id:
                return study
            # More than this launch's own attempt: an earlier or concurrent one may have sent a
            # POST (its lock released by a commit, a rollback or a dead connection) whose draft
            # was never recorded here.
            answer = self._earlier_draft(survey, study) if study.draft_attempts > 1 else None
            if answer is None:
                try:
                    answer = self.client.create_study(self.study_body(survey, study))
                except PaymentOutcomeUnknown:
                    # Kept (the block commits): a record that this create went unanswered.
                    ProlificStudy.objects.filter(pk=study.pk).update(draft_lost_at=timezone.now())
                    lost = True
            if not lost:
                ProlificStudy.objects.filter(pk=study.pk).update(
                    study_id=answer["id"],
                    status=answer.get("status", "UNPUBLISHED"),
                    places=answer.get("total_available_places", slot_count(survey)),
                )
        if lost:
            raise ProviderError(
                "Prolific did not answer when the draft study was being created; it may have made it. "
                f"Launch again: RateLab first looks for a draft named {draft_prefix(survey, study)!r}... in your "
                "Prolific account and uses it, and creates one only if there is none."
            )
        study.refresh_from_db()
        return study

    def _check_workspace_currency(self, study):
        """Refuses a study whose reward is set in another currency than the workspace pays in.

        Prolific takes the reward as a number of the workspace's minor unit, so 100 set as pence
        would be paid as 100 cents in a USD workspace: its own floor check would then judge a
        reward the researcher never chose. Only a server that names its workspace
        (PROLIFIC_WORKSPACE_ID) can ask; without it the study's currency is taken as set."""
        workspace = settings.PROLIFIC_WORKSPACE_ID
        if not workspace:
            return
        paid_in = self.client.workspace_balance(workspace).get("currency_code")
        if not paid_in:
            raise ProviderError(f"Prolific did not say which currency workspace {workspace} pays in; try again.")
        problem = currency_problem(study.reward_cents, study.estimated_minutes, set_in=study.currency, paid_in=paid_in)
        if problem:
            raise ProviderError(problem)

    def _earlier_draft(self, survey, study):
        """The draft an earlier launch's unrecorded create made (Prolific lists it under our
        internal name among the account's drafts), else None."""
        prefix = draft_prefix(survey, study)
        drafts = self.client.studies(states=("UNPUBLISHED",))
        found = [item for item in drafts if str(item.get("internal_name") or "").startswith(prefix)]
        return found[0] if found else None

    def prepare(self, *, survey):
        # Called by the launch outside its transaction: the draft's id is committed before the
        # PUBLISH transition is tried, so a refused PUBLISH leaves no draft unaccounted for.
        self.create(survey=survey)

    def _published_anyway(self, study):
        """Prolific's answer for the study when it is published (or publishing) after all, else None."""
        try:
            answer = self.client.get_study(study.study_id)
        except ProviderError:
            return None
        return answer if answer.get("status") in ("ACTIVE", "PUBLISHING") else None

    def publish(self, *, survey):
        study = self.create(survey=survey)
        if study.status not in ("ACTIVE", "PUBLISHING"):
            try:
                answer = self.client.transition_study(study.study_id, "PUBLISH")
            except ProviderError as error:
                # A PUBLISH whose answer was lost (a timeout) may have been carried out, and the
                # retry is then refused: Prolific's own state of the study decides.
                answer = self._published_anyway(study)
                if answer is None:
                    raise ProviderError(
                        f"Prolific did not publish draft study {study.study_id}: {error} "
                        "The draft is kept and recorded: launching again publishes this same draft."
                    ) from None
            ProlificStudy.objects.filter(pk=study.pk).update(status=answer.get("status", "PUBLISHING"))
        return {"study_id": study.study_id, "places": study.places}

    def pause(self, *, survey):
        study = self._restartable(survey, "paused")
        if not study.study_id or study.status == "PAUSED":  # nothing on Prolific to pause
            return {"status": study.status}
        return self._transition(survey, "PAUSE")

    def resume(self, *, survey):
        study = self._restartable(survey, "resumed")
        if not study.study_id or study.status == "ACTIVE":
            return {"status": study.status}
        return self._transition(survey, "START")

    @staticmethod
    def _restartable(survey, what):
        # Prolific cannot restart a stopped study: say so instead of sending a transition it refuses.
        study = study_settings(survey)
        if study.status == "COMPLETED":
            raise ProviderError(
                f"Prolific study {study.study_id} was stopped (completed) and cannot be {what}: "
                "create a new survey to recruit more participants."
            )
        return study

    def expire(self, *, survey):
        # Closing a survey never put on Prolific stops nothing there (and must not fail the close).
        study = study_settings(survey)
        if not study.study_id:
            return {"status": ""}
        if study.status == "COMPLETED":  # stopped already (on this page or in Prolific's app)
            return {"status": study.status}
        return self._transition(survey, "STOP")

    def _transition(self, survey, action):
        study = study_settings(survey)
        if not study.study_id:
            raise ProviderError("This survey has no Prolific study yet: publish it first.")
        answer = self.client.transition_study(study.study_id, action)
        ProlificStudy.objects.filter(pk=study.pk).update(status=answer.get("status", study.status))
        return {"status": answer.get("status", "")}

    def add_places(self, *, survey, places):
        study = study_settings(survey)
        if not study.study_id:
            raise ProviderError("This survey has no Prolific study yet: publishing creates it with every place.")
        if places <= study.places:
            raise ProviderError(f"Prolific only lets places increase: the study has {study.places}, not {places}.")
        if places > slot_count(survey):
            # A participant on a place beyond the task slots would find no work and have to return.
            raise ProviderError(
                f"The survey has {slot_count(survey)} task slots, so the study needs at most {slot_count(survey)} "
                f"places, not {places}: a participant on another place would find no work. To collect more "
                "ratings, add annotators per HIT on the survey page (Planning), which adds the places too."
            )
        try:
            answer = self.client.set_places(study.study_id, places)
        except ProviderError as error:
            # The PATCH sets an absolute number, so repeating it is harmless; but when an earlier
            # try was carried out and its answer lost, Prolific may refuse the repeat (places only
            # increase). Prolific's own count decides whether the study already has these places.
            answer = self._study_with_places(study, places)
            if answer is None:
                raise error
        ProlificStudy.objects.filter(pk=study.pk).update(places=answer.get("total_available_places", places))
        return {"places": places}

    def _study_with_places(self, study, places):
        """Prolific's answer for the study when it already has at least `places` places, else None."""
        try:
            answer = self.client.get_study(study.study_id)
        except ProviderError:
            return None
        have = answer.get("total_available_places")
        if isinstance(have, int) and not isinstance(have, bool) and have >= places:
            return answer
        return None

    can_add_assignments = True

    def add_assignments(self, *, survey, per_hit):
        """One place per assignment slot: a published study's places rise to the new slot count."""
        study = study_settings(survey)
        if not study.study_id:
            return {"places": None}  # not on Prolific yet: publishing creates it with every slot
        wanted = slot_count(survey)
        if wanted <= study.places:
            # Places raised by hand on this page already cover the new slots; Prolific only lets
            # places grow, so asking for the same or fewer would refuse the whole extension.
            return {"places": study.places}
        return self.add_places(survey=survey, places=wanted)

    def cost_preview(self, *, survey, places=None):
        """`{"total_cost_cents": int}`: the study's cost (or `places` places'), Prolific's fees and VAT included."""
        study = study_settings(survey)
        places = slot_count(survey) if places is None else places
        answer = self.client.cost(reward_cents=study.reward_cents, places=places)
        total = answer.get("total_cost") if isinstance(answer, dict) else None
        if not isinstance(total, int | float) or isinstance(total, bool):
            raise ProviderError(f"Prolific's cost calculator answered without a total_cost: {str(answer)[:200]}")
        # A double in cents (e.g. 1260.0); rounded to whole cents for display.
        return {"total_cost_cents": round(total)}

    def extension_cost(self, *, survey, per_hit, n_hits):
        """The added places at the study's reward, and Prolific's own estimate with its fees (its cost
        calculator: a request that creates or charges nothing); its refusal is said, not raised."""
        study = study_settings(survey)
        places = per_hit * n_hits
        rewards = money(study.reward_cents * places, study.currency)
        lines = [
            f"{places:,} more Prolific places at {money(study.reward_cents, study.currency)} each: {rewards} in "
            "rewards"
            + (
                f"; the study's places rise from {study.places:,} to {slot_count(survey) + places:,}."
                if study.study_id
                else "; the study is not on Prolific yet, so nothing is sent now: publishing creates it with "
                "every place."
            )
        ]
        try:
            total = money(self.cost_preview(survey=survey, places=places)["total_cost_cents"], study.currency)
        except ProviderError as error:
            lines.append(f"Prolific's estimate with its fees could not be had: {error}")
            return {"total": f"{rewards} in rewards, plus Prolific's fees", "lines": lines}
        lines.append(f"Prolific's estimate for these places, its fees and VAT included: {total}.")
        return {"total": f"{total} (Prolific's estimate, fees included)", "lines": lines}

    # --- reconciliation ---------------------------------------------------------------------
    def sync(self, *, survey):
        study = study_settings(survey)
        if not study.study_id:
            return {"listed": 0, "confirmed": 0, "unknown": 0}
        listed = self.client.submissions(study.study_id)
        ours = {s.session_id: s for s in study.submissions.select_related("study__survey", "annotator")}
        confirmed = unknown = 0
        for item in listed:
            row = ours.get(item.get("id"))
            if row is None:
                unknown += 1  # a participant who never reached the entry page, or did not press Start
                continue
            participant = item.get("participant_id") or item.get("participant") or ""
            row = apply_submission_status(
                row,
                status=item.get("status", ""),
                participant_id=participant,
                study_id=item.get("study_id", study.study_id),
                # the code the participant came back with: the page flags one that is not the study's
                code=listed_code(item),
            )
            confirmed += row.confirmed
        # Bonuses whose pay call's answer was lost: Prolific's list of each submission's bonuses says.
        study_bonuses_reconcile(client=self.client, study=study)
        median = measured_median_seconds(listed)
        ProlificStudy.objects.filter(pk=study.pk).update(last_synced_at=timezone.now(), measured_median_seconds=median)
        return {"listed": len(listed), "confirmed": confirmed, "unknown": unknown, "median_seconds": median}

    def block(self, *, annotator, reason, owner=None):
        # The owner's later RateLab studies refuse them at claim time (assignment_claim reads blocks).
        return block_for_owner(annotator=annotator, owner=owner, reason=reason)
