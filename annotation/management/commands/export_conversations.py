from annotation.management.cli import DatasetExportCommand
from annotation.services.exporting.conversations import conversations_export


class Command(DatasetExportCommand):
    help = "Write a dataset's conversations in the import format to stdout or --output."
    noun = "conversations"

    def export(self, *, dataset, stream, fmt):
        return conversations_export(dataset=dataset, stream=stream, fmt=fmt)
