from django.urls import reverse


def test_dataset_list_requires_login(client, db):
    response = client.get(reverse("annotation:dataset_list"))
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]


def test_dataset_list_shows_only_own_datasets(client, researcher, other_researcher):
    from annotation.models import Dataset

    Dataset.objects.create(name="alice-study", owner=researcher)
    Dataset.objects.create(name="bob-study", owner=other_researcher)
    client.force_login(researcher)
    page = client.get(reverse("annotation:dataset_list")).content.decode()
    assert "alice-study" in page
    assert "bob-study" not in page
