"""Forms of the annotation app, one module per family of pages."""
