"""What the admin pages of several models share."""

class AuditedReadOnly:
    """Rows that are evidence (what annotators answered, what researchers decided): shown, never
    edited or deleted here, since the admin keeps no trail of such a change. Corrections go through
    the pages and services that record who did what (exclusions, reviews)."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
