"""Why a dataset or survey may not be deleted now, as later layers know it.

Annotation's delete (annotation/services/deletion.py) refuses while a job of a later layer uses the
rows it would remove (scoring: a metrics run or a training run on the dataset). Those layers
register a guard here in their AppConfig.ready; annotation calls whatever is registered.
"""

_guards = []


def register_deletion_guard(guard):
    """`guard(target) -> [sentence, ...]`: why `target` (a Dataset or a Survey) cannot go now."""
    if guard not in _guards:
        _guards.append(guard)


def deletion_guard_reasons(target):
    return [reason for guard in _guards for reason in guard(target)]
