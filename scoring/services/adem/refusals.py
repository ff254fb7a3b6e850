"""The one error ADEM services raise for a request they refuse; its message says what is missing."""


class AdemRefusal(ValueError):
    """Training or scoring refused; the message says what is missing.

    `field` names the input at fault where there is one (the scoring API answers it in its 400),
    `index` the triple it was found in.
    """

    def __init__(self, message, *, field=None, index=None):
        super().__init__(message)
        self.field = field
        self.index = index
