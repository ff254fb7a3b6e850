from annotation.management.cli import DatasetExportCommand
from annotation.services.exporting import dataset_export


class Command(DatasetExportCommand):
    help = "Write a dataset in the import format (JSONL or CSV) to stdout or --output."
    noun = "contexts"

    def export(self, *, dataset, stream, fmt):
        # Every line written ends in a newline, so stdout's wrapper adds nothing.
        return dataset_export(dataset=dataset, stream=stream, fmt=fmt)
