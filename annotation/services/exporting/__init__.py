"""Writing RateLab's formats back out: a dataset (`datasets`) and its conversations (`conversations`)
in the import format, and the names of downloads. A survey's answers are written by its kind
(annotation/kinds/<kind>/exporting.py); reading the formats in is annotation/importing/.

The dataset export and the download names are re-exported here, where pages and commands import them.
"""

from annotation.services.exporting.datasets import REAL_IDS_HEADER, REAL_IDS_SUFFIX, dataset_export, download_filename

__all__ = ["REAL_IDS_HEADER", "REAL_IDS_SUFFIX", "dataset_export", "download_filename"]
