"""Views, one module per area (datasets, surveys, annotator task pages, quality, ...)."""
