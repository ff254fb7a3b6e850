"""Extension points through which later layers add to annotation's pages and exports.

`annotation` imports neither `scoring` nor `analysis`, yet the dataset page and
`export_dataset` show metric scores. So the later app registers a provider here (in its
AppConfig.ready) and annotation calls whatever is registered.
"""

from dataclasses import dataclass

_response_extras = []


def register_response_extras(provider):
    """`provider(dataset, response_ids) -> {response_id: {key: value}}`, merged into each response."""
    if provider not in _response_extras:
        _response_extras.append(provider)


def response_extras(dataset, response_ids):
    """Everything registered providers add for these responses: `{response_id: {key: value}}`."""
    merged = {}
    for provider in _response_extras:
        for response_id, extras in provider(dataset, response_ids).items():
            merged.setdefault(response_id, {}).update(extras)
    return merged


# --- The pipeline bar -------------------------------------------------------------------------
# Every dataset page shows where the dataset stands: Upload -> Surveys -> Quality -> Metrics ->
# ADEM -> Report. annotation knows the first three steps; scoring and analysis register providers
# for theirs, so the bar never makes annotation import them.


@dataclass(frozen=True)
class PipelineStep:
    """One step of a dataset's pipeline as the bar shows it.

    `order` places it (Upload 10 ... Report 60); `state` is a short phrase ("3 surveys, 1 live");
    `done` tells whether the step has produced anything yet (the bar marks the first undone one
    as the next thing to do); `url` is where the step's page is.
    """

    key: str
    label: str
    url: str
    state: str
    done: bool
    order: int


_pipeline_providers = []


def register_pipeline_steps(provider):
    """`provider(dataset, user) -> [PipelineStep, ...]`; registered once (in AppConfig.ready)."""
    if provider not in _pipeline_providers:
        _pipeline_providers.append(provider)


def pipeline_steps(dataset, user):
    """Every registered step for this dataset, in pipeline order."""
    steps = [step for provider in _pipeline_providers for step in provider(dataset, user)]
    return sorted(steps, key=lambda step: step.order)


# --- Survey page panels ------------------------------------------------------------------------
# The survey page shows what later layers know about the survey (analysis: how many more ratings a
# target precision needs, with the button to extend the study) without annotation importing them.

_survey_panels = []


def register_survey_panel(provider):
    """`provider(request, survey) -> safe HTML or ""`; registered once (in AppConfig.ready).

    The request is passed so that a panel's forms carry the CSRF token and it can check the user."""
    if provider not in _survey_panels:
        _survey_panels.append(provider)


def survey_panels(request, survey):
    """The registered panels' HTML for this survey, in registration order (empty ones left out)."""
    return [html for html in (provider(request, survey) for provider in _survey_panels) if html]


# --- Sentence embeddings for the integrity flags ------------------------------------------------
# The near-duplicate and reference-LLM flags (issue 40) compare MiniLM sentence vectors as well as
# word n-grams. The model is loaded by scoring (scoring.metrics.neural), which annotation may not
# import, so scoring registers its encoder here and annotation uses whatever is registered.

_sentence_encoders = []


def register_sentence_encoder(encoder):
    """`encoder(texts) -> {text: unit vector}` (empty texts left out); registered once (AppConfig.ready)."""
    if encoder not in _sentence_encoders:
        _sentence_encoders.append(encoder)


def sentence_encoder():
    """The registered encoder, or None when none is (then the flags use n-grams only, and say so)."""
    return _sentence_encoders[0] if _sentence_encoders else None
