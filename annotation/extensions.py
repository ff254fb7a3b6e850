"""Extension points through which later layers add to annotation's pages and exports.

`annotation` imports neither `scoring` nor `analysis`, yet the dataset page and
`export_dataset` show metric scores. So the later app registers a provider here (in its
AppConfig.ready) and annotation calls whatever is registered.
"""

_response_extras = []


def register_response_extras(provider):
    """`provider(dataset, response_ids) -> {response_id: {key: value}}`, merged into each response."""
    if provider not in _response_extras:
        _response_extras.append(provider)


def response_extras(dataset, response_ids):
    """Everything registered providers add for these responses: `{response_id: {key: value}}`."""
    merged = {}
    for provider in _response_extras:
        for response_id, extras in provider(dataset, response_ids).items():
            merged.setdefault(response_id, {}).update(extras)
    return merged
