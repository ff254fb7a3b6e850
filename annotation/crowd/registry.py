"""Which provider serves a survey. Providers register a factory `f(survey) -> CrowdProvider`."""

from annotation.crowd.base import ProviderError
from annotation.crowd.link_platform import LinkPlatformProvider
from annotation.crowd.local import LocalProvider
from annotation.crowd.mturk.provider import MTurkProvider
from annotation.crowd.prolific.provider import ProlificProvider

PROVIDERS = {
    LocalProvider.name: LocalProvider.for_survey,
    MTurkProvider.name: MTurkProvider.for_survey,
    ProlificProvider.name: ProlificProvider.for_survey,
    LinkPlatformProvider.name: LinkPlatformProvider.for_survey,
}


def get_provider(survey):
    try:
        factory = PROVIDERS[survey.provider]
    except KeyError:
        raise ProviderError(f"No crowd provider for {survey.provider!r}.") from None
    return factory(survey)


def can_add_assignments(survey):
    """Whether the survey's provider can add assignments to a running study (without building it)."""
    factory = PROVIDERS.get(survey.provider)
    return bool(getattr(getattr(factory, "__self__", None), "can_add_assignments", False))


def assignment_ceiling(survey):
    """The assignments per HIT an extension of this survey cannot cross (MTurk's 10), or None."""
    factory = PROVIDERS.get(survey.provider)
    return getattr(getattr(factory, "__self__", None), "assignment_ceiling", None)
