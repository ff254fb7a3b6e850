"""Report sections that grew out of `analysis/services.py`: each builds one part of `Report.data`."""
