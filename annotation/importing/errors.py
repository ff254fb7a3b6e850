class DataImportError(Exception):
    """An import file is wrong. The message names the line (or CSV row) and the field.

    Raised before anything is written, so a caller can show the message as it is: the
    commands print it and exit non-zero; the upload form shows it beside the file field.
    """

    def __init__(self, message, *, line=None, field=None, unit="line"):
        self.detail = message
        self.line = line
        self.field = field
        self.unit = unit
        where = []
        if line is not None:
            where.append(f"{unit} {line}")
        if field:
            where.append(f"field '{field}'")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)
