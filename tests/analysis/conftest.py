"""USR-PersonaChat with its three annotators, plus two simple metrics computed here."""

import re

import pytest

from annotation.models import Response
from scoring.models import MetricScore
from tests.factories import load_dataset_records, load_rating_records
from tests.shared_loaders import usr_personachat

WORDS = re.compile(r"\w+")
STOPWORDS = {"i", "a", "the", "to", "and", "is", "you", "it", "of", "that", "do", "my", "in", "me", "are", "what"}


def words(text):
    return WORDS.findall(text.lower())


def overlap_f1(candidate, reference):
    """Unigram-overlap F1 (bag of words), a stand-in metric the test computes independently."""
    cand, ref = words(candidate), words(reference)
    if not cand or not ref:
        return 0.0
    common = sum(min(cand.count(w), ref.count(w)) for w in set(cand))
    if common == 0:
        return 0.0
    precision, recall = common / len(cand), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def without_stopwords(text):
    return " ".join(w for w in words(text) if w not in STOPWORDS)


def simple_metrics(response_text, reference_text):
    return {
        "length": float(len(words(response_text))),
        "overlap_f1": overlap_f1(response_text, reference_text),
        "overlap_f1_nostop": overlap_f1(without_stopwords(response_text), without_stopwords(reference_text)),
    }


@pytest.fixture
def usr_study(shared_data, researcher):
    """(dataset, survey, rating records, metric values by response id) for USR-PersonaChat."""
    records, ratings = usr_personachat(shared_data)
    dataset = load_dataset_records(records=records, name="usr_personachat", owner=researcher)
    survey = load_rating_records(records=ratings, dataset=dataset, survey_name="usr-overall", owner=researcher)
    values = {}
    scores = []
    for response in Response.objects.filter(context__dataset=dataset).select_related("context"):
        reference = response.context.references.first().text
        values[response.pk] = simple_metrics(response.text, reference)
        scores += [
            MetricScore(response=response, metric=name, version="test", value=value)
            for name, value in values[response.pk].items()
        ]
    MetricScore.objects.bulk_create(scores)
    return dataset, survey, ratings, values


@pytest.fixture
def page_client(client, researcher, django_capture_on_commit_callbacks, settings, tmp_path):
    """The researcher's client, running the on-commit callbacks (the eager report task) of each GET."""
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 100
    settings.MEDIA_ROOT = tmp_path
    client.force_login(researcher)

    def get(url):
        with django_capture_on_commit_callbacks(execute=True):
            return client.get(url)

    return get
