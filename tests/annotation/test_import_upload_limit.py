"""UPLOAD_MAX_MB: a larger upload is refused while it streams in, with a clear message, and nothing
is written; a file within the limit imports as before."""

import html
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.importing import DataImportError
from annotation.models import Context, Dataset, Rating, Survey
from annotation.services import dataset_import
from annotation.services.runtime.uploads import RefusedUpload, SizeLimitUploadHandler
from tests.annotation.files import SMALL_DATASET, SMALL_RATINGS
from tests.factories import load_dataset_records, records_to_jsonl

MB = 1024 * 1024


def jsonl_of_size(size):
    """A valid dataset file of at least `size` bytes (many small contexts)."""
    lines = []
    total = 0
    i = 0
    while total < size:
        line = json.dumps({"context_id": f"c{i}", "context": ["x" * 200], "responses": [{"system": "s", "text": "y"}]})
        lines.append(line + "\n")
        total += len(line) + 1
        i += 1
    return "".join(lines).encode()


def file_errors(response):
    return [html.unescape(message) for message in response.context["form"].errors["file"]]


@pytest.fixture
def one_megabyte_limit(settings):
    settings.UPLOAD_MAX_MB = 1


def test_a_2_mb_dataset_upload_is_refused_under_a_1_mb_limit_and_nothing_is_written(
    client, researcher, one_megabyte_limit
):
    client.force_login(researcher)
    response = client.post(
        reverse("annotation:dataset_upload"),
        {"name": "big", "file": SimpleUploadedFile("big.jsonl", jsonl_of_size(2 * MB))},
    )
    assert response.status_code == 200
    assert file_errors(response) == [
        "the file is larger than the upload limit of 1 MB (UPLOAD_MAX_MB); split it into smaller files or ask "
        "an administrator to import it with the import command. Nothing was imported."
    ]
    assert Dataset.objects.count() == Context.objects.count() == 0


def test_a_file_just_within_the_limit_imports(client, researcher, one_megabyte_limit):
    client.force_login(researcher)
    data = jsonl_of_size(MB - 2000)
    assert len(data) <= MB
    response = client.post(
        reverse("annotation:dataset_upload"), {"name": "fits", "file": SimpleUploadedFile("fits.jsonl", data)}
    )
    assert response.status_code == 302
    assert Dataset.objects.get(name="fits").contexts.count() == data.count(b"\n")


def test_a_ratings_upload_over_the_limit_is_refused_too(client, researcher, one_megabyte_limit):
    dataset = load_dataset_records(records=SMALL_DATASET, name="study", owner=researcher)
    client.force_login(researcher)
    big = records_to_jsonl(SMALL_RATINGS) * (2 * MB // len(records_to_jsonl(SMALL_RATINGS)) + 1)
    response = client.post(
        reverse("annotation:ratings_upload", args=[dataset.pk]),
        {"file": SimpleUploadedFile("r.jsonl", big), "scale_min": 1, "scale_max": 5},
    )
    assert "larger than the upload limit of 1 MB" in file_errors(response)[0]
    assert Survey.objects.count() == Rating.objects.count() == 0


def test_the_handler_stops_passing_data_on_once_the_limit_is_passed(settings):
    settings.UPLOAD_MAX_MB = 1
    handler = SizeLimitUploadHandler()
    handler.new_file("file", "big.jsonl", "application/jsonl", None)
    chunk = b"x" * (256 * 1024)
    passed = [handler.receive_data_chunk(chunk, i * len(chunk)) for i in range(8)]
    assert [p is not None for p in passed] == [True] * 4 + [False] * 4
    refused = handler.file_complete(8 * len(chunk))
    assert isinstance(refused, RefusedUpload)
    assert (refused.size, refused.received, refused.read()) == (0, 8 * len(chunk), b"")


def test_the_service_stops_reading_at_max_bytes_whatever_the_caller(db):
    data = jsonl_of_size(64 * 1024)
    with pytest.raises(DataImportError, match=r"larger than the upload limit of 0\.03 MB"):
        dataset_import(file=data, name="x", fmt="jsonl", max_bytes=32 * 1024)
    assert Dataset.objects.count() == 0
    assert dataset_import(file=data, name="x", fmt="jsonl", max_bytes=len(data)).contexts.count() > 0


def test_a_single_line_longer_than_the_limit_is_not_read_whole(db):
    line = b'{"context_id": "c1", "context": ["' + b"x" * (4 * MB) + b'"], "responses": []}\n'

    class CountingStream:
        """A binary file that records how much of it was read."""

        def __init__(self, data):
            self.data, self.position, self.read_bytes = data, 0, 0

        def readline(self, limit=-1):
            end = self.data.find(b"\n", self.position) + 1 or len(self.data)
            if limit >= 0:
                end = min(end, self.position + limit)
            chunk = self.data[self.position : end]
            self.position = end
            self.read_bytes += len(chunk)
            return chunk

    stream = CountingStream(line)
    with pytest.raises(DataImportError, match="larger than the upload limit"):
        dataset_import(file=stream, name="x", fmt="jsonl", max_bytes=MB)
    assert stream.read_bytes <= MB + 1


def test_the_upload_forms_state_the_limit_and_drop_the_partial_copy(client, researcher, one_megabyte_limit):
    client.force_login(researcher)
    page = client.get(reverse("annotation:dataset_upload")).content.decode()
    assert "At most 1 MB." in page
    response = client.post(
        reverse("annotation:dataset_upload"),
        {"name": "big", "file": SimpleUploadedFile("big.jsonl", jsonl_of_size(6 * MB))},
    )
    # Beyond FILE_UPLOAD_MAX_MEMORY_SIZE Django streams to a temporary file; the refused upload's is closed.
    handlers = response.wsgi_request.upload_handlers
    partial = [h.file for h in handlers if getattr(h, "file", None) is not None]
    assert partial and all(f.closed for f in partial)
