"""The report's sections: one module each, listed in page order by `registry.py` (see `base.Section`)."""
