"""Values as text, pure (no Django): how a page or a file writes them (CSV cells, p-values) and how the
app reads them back from a form, a submission or an import (aspect details, answer seconds, reserved names).
"""
