"""New passwords use PBKDF2-SHA256 at OWASP's 600,000 iterations; stronger stored hashes are kept (F28)."""

from django.contrib.auth.hashers import (
    PBKDF2PasswordHasher,
    check_password,
    get_hasher,
    identify_hasher,
    make_password,
)

from config import settings as project_settings
from config.hashers import OWASP_PBKDF2_SHA256_ITERATIONS, PBKDF2SHA256PasswordHasher

DJANGO_DEFAULT = "django.contrib.auth.hashers.PBKDF2PasswordHasher"


def test_the_project_hashes_new_passwords_at_owasps_work_factor():
    # the project's setting (tests themselves swap in a fast hasher: tests/conftest.py)
    assert project_settings.PASSWORD_HASHERS[0] == "config.hashers.PBKDF2SHA256PasswordHasher"
    assert DJANGO_DEFAULT in project_settings.PASSWORD_HASHERS
    assert OWASP_PBKDF2_SHA256_ITERATIONS == 600_000


def test_hashes_verify_both_ways_and_a_stronger_one_is_not_downgraded(settings):
    settings.PASSWORD_HASHERS = ["config.hashers.PBKDF2SHA256PasswordHasher", DJANGO_DEFAULT]
    hasher = get_hasher()
    assert isinstance(hasher, PBKDF2SHA256PasswordHasher)
    new = make_password("correct horse battery")
    assert new.startswith("pbkdf2_sha256$600000$")
    assert check_password("correct horse battery", new) and not check_password("wrong", new)
    assert not hasher.must_update(new)
    stronger = PBKDF2PasswordHasher().encode("correct horse battery", "s" * 22)
    assert stronger.startswith("pbkdf2_sha256$1000000$")
    assert identify_hasher(stronger).algorithm == "pbkdf2_sha256"
    assert check_password("correct horse battery", stronger)
    assert not hasher.must_update(stronger)  # Django's own default (more work) is kept as it is
    weaker = hasher.encode("correct horse battery", "s" * 22, iterations=100_000)
    assert hasher.must_update(weaker)
