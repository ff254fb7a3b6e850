import pytest

from tests import shared_loaders
from tests.factories import load_dataset_records, load_rating_records

pytestmark = pytest.mark.shared_data


def test_usr_personachat_loads_sixty_contexts_of_five_responses(shared_data, db):
    records, ratings = shared_loaders.usr_personachat(shared_data)
    dataset = load_dataset_records(records=records, name="usr")
    survey = load_rating_records(records=ratings, dataset=dataset, survey_name="usr-overall")
    assert dataset.contexts.count() == 60
    assert dataset.systems.count() == 5
    assert survey.ratings.count() == 60 * 5 * 3
    assert set(survey.ratings.values_list("annotator__worker_id", flat=True)) == {
        "shikib",
        "maxine",
        "mckenna",
        "yulan",
    }


@pytest.mark.parametrize("corpus", ["dailydialog", "empatheticdialogues"])
def test_grade_loads_150_contexts_of_two_systems(shared_data, db, corpus):
    records, ratings = shared_loaders.grade(shared_data, corpus)
    assert len(records) == 150
    assert all(len(r["responses"]) == 2 for r in records)
    assert 8 * 300 <= len(ratings) <= 11 * 300
