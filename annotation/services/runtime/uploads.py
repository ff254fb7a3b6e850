"""The upload size limit (settings.UPLOAD_MAX_MB), enforced while the request body streams in.

Django stores an uploaded file in memory up to FILE_UPLOAD_MAX_MEMORY_SIZE and on disk
beyond, but has no limit of its own on a file's size. SizeLimitUploadHandler sits first in
FILE_UPLOAD_HANDLERS: it counts each file's bytes and, once the limit is passed, stops handing
chunks to the handlers behind it. The rest of that file is read from the socket and dropped,
so neither memory nor disk grows with it. The form receives a RefusedUpload: size 0, so any
plain FileField refuses it ("The submitted file is empty."), and a `refusal` message that the
import forms' UploadField shows instead.
"""

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.core.files.uploadhandler import FileUploadHandler

from annotation.importing.text import too_large_message

MEGABYTE = 1024 * 1024


def upload_max_bytes():
    return settings.UPLOAD_MAX_MB * MEGABYTE


class RefusedUpload(UploadedFile):
    """A file the size limit stopped: its name, the bytes received before it stopped, no content."""

    def __init__(self, *, name, content_type, received, refusal):
        super().__init__(file=None, name=name, content_type=content_type, size=0)
        self.received = received
        self.refusal = refusal

    def open(self, mode=None):
        return self

    def read(self, *args):
        return b""

    def readline(self, *args):
        return b""

    def seekable(self):
        return False

    def chunks(self, chunk_size=None):
        return iter(())


class SizeLimitUploadHandler(FileUploadHandler):
    def new_file(self, *args, **kwargs):
        super().new_file(*args, **kwargs)
        self.limit = upload_max_bytes()
        self.received = 0
        self.refused = False

    def receive_data_chunk(self, raw_data, start):
        self.received += len(raw_data)
        if self.received > self.limit:
            self.refused = True
        # None keeps the chunk from the handlers behind this one (memory or temporary file).
        return None if self.refused else raw_data

    def file_complete(self, file_size):
        if not self.refused:
            return None  # the next handler returns the stored file
        self._drop_partial_copies()
        return RefusedUpload(
            name=self.file_name,
            content_type=self.content_type,
            received=self.received,
            refusal=too_large_message(self.limit),
        )

    def _drop_partial_copies(self):
        # The handlers behind this one hold the first `limit` bytes (in memory or a temporary
        # file) and are never asked to finish: close them now rather than at garbage collection.
        for handler in getattr(self.request, "upload_handlers", ()):
            partial = getattr(handler, "file", None) if handler is not self else None
            if partial is not None:
                partial.close()
