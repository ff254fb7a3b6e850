"""Names the app gives meaning to, which an imported file or a researcher may not use (no Django)."""

# A dataset's references as a pseudo-system in pairwise studies (annotation.kinds.pairwise.references).
REFERENCE_SYSTEM_NAME = "(reference)"


def reserved_system_name_problem(name):
    """Why `name` may not name an imported or written system, or None when it may."""
    if str(name).strip() == REFERENCE_SYSTEM_NAME:
        return (
            f"{REFERENCE_SYSTEM_NAME!r} is reserved for the dataset's references in pairwise studies; rename the system"
        )
    return None


def system_label(name):
    """A system's name as a researcher's report shows it: the reference pseudo-system is spelled out."""
    return "reference (gold)" if name == REFERENCE_SYSTEM_NAME else name
