"""How the app runs in a process: settings checked at start-up (`checks`), the upload size limit enforced
while a request streams in (`uploads`), heavy libraries imported at their first use (`lazy_import`),
files written whole or not at all (`files`).

Nothing is imported here: `lazy_import` and `files` are used by pure packages of every layer.
"""
