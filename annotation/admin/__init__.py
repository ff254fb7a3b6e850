"""Admin for every annotation model: for staff who inspect or repair data, not the researcher UI.

Foreign keys use raw id widgets: a select box of 50,000 responses would not render. Django's admin
autodiscovery imports this package; the modules below register their models when imported.
"""

from annotation.admin import (  # noqa: F401
    answers,
    bws,
    chat_systems,
    consent,
    conversations,
    datasets,
    live_chat,
    mturk,
    pairwise,
    platforms,
    studies,
)
