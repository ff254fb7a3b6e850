from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import HttpResponseRedirect
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from config.security.password_reset import ThrottledPasswordResetView

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="annotation:dataset_list", permanent=False)),
    # Pages that name no icon (the admin's) make browsers ask for /favicon.ico: a 404 and a console error.
    # Resolved per request: with the manifest storage, static() needs collectstatic's manifest.
    path("favicon.ico", lambda request: HttpResponseRedirect(static("img/favicon.svg"))),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Password reset by e-mail: Django's own views, templates in templates/registration/; the mail
    # throttled per address and per client (config/security/password_reset.py).
    path("accounts/password_reset/", ThrottledPasswordResetView.as_view(), name="password_reset"),
    path("accounts/password_reset/done/", auth_views.PasswordResetDoneView.as_view(), name="password_reset_done"),
    path(
        "accounts/reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path("accounts/reset/done/", auth_views.PasswordResetCompleteView.as_view(), name="password_reset_complete"),
    path("admin/", admin.site.urls),
    path("", include("annotation.urls")),
    path("scoring/", include("scoring.urls")),
    path("analysis/", include("analysis.urls")),
]
