"""Writes and reads of cached reports: building one from the registered sections (`build`), telling
whether its inputs changed (`freshness`), exporting and paging it (`exports`, `page`), the worker's
liveness records and the pipeline bar's state."""
