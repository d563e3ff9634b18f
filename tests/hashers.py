"""The test processes' password hasher (tests/conftest.py `_quick_password_hashing`):
Argon2id, the product's algorithm, at its smallest cost (one pass over 8 KiB instead of
the default's two over 100 MiB on 8 lanes: about 0.25 s of CPU a user on this machine).
Its hashes carry their parameters, so the live servers (the product's settings) verify
them as Argon2 and rehash them at the default cost at a sign-in (Django's must_update:
the upgrade path tests/circuits/test_api_auth.py checks for PBKDF2)."""
from django.contrib.auth.hashers import Argon2PasswordHasher


class QuickArgon2PasswordHasher(Argon2PasswordHasher):
    time_cost = 1
    memory_cost = 8
    parallelism = 1
