# The API tests' fixtures, shared with tests/circuits (runs are started on circuits).
from tests.circuits.conftest import circuit_of, client_for, fast_password_hashing  # noqa: F401
