"""Password hashing: PBKDF2-HMAC-SHA256 at OWASP's recommended work factor (issue 35, F28).

A login was one PBKDF2 check at Django 5.2's 1,000,000 iterations: 0.5-0.6 s of CPU on the 2-core
development machine when quiet, 1.2 s and more while the same cores computed a report (measured
with bench/bench_pages.py and a profile of the login POST: the hash was 97% of the request; axes'
lookups, the session and the redirect the rest). OWASP's Password Storage Cheat Sheet recommends
600,000 iterations for PBKDF2-HMAC-SHA256; new hashes use that, 40% less work per login.

Same algorithm name, so every stored hash still verifies (its own iteration count is in it). A hash
made with more iterations (Django's default) is kept as it is, never re-encoded with fewer: only a
weaker one (fewer iterations, or a short salt) is upgraded at the next login.
"""

from django.contrib.auth.hashers import PBKDF2PasswordHasher, must_update_salt

OWASP_PBKDF2_SHA256_ITERATIONS = 600_000


class PBKDF2SHA256PasswordHasher(PBKDF2PasswordHasher):
    iterations = OWASP_PBKDF2_SHA256_ITERATIONS

    def must_update(self, encoded):
        decoded = self.decode(encoded)
        return decoded["iterations"] < self.iterations or must_update_salt(decoded["salt"], self.salt_entropy)
