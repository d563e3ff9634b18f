"""A push whose transaction PostgreSQL aborts as a deadlock victim (nothing written) is
run again, not answered with a 500; any other database error still propagates."""
import pytest
from django.db import OperationalError

from runs.input_log import retry_on_deadlock


class Cause(Exception):
    def __init__(self, sqlstate):
        super().__init__(sqlstate)
        self.sqlstate = sqlstate


def failing(times, sqlstate):
    calls = []

    def write():
        calls.append(1)
        if len(calls) <= times:
            raise OperationalError("deadlock detected") from Cause(sqlstate)
        return "logged"

    return write, calls


@pytest.mark.parametrize("sqlstate", ["40P01", "40001"])
def test_a_deadlock_victim_is_run_again(sqlstate):
    write, calls = failing(2, sqlstate)
    assert retry_on_deadlock(write) == "logged"
    assert len(calls) == 3


def test_other_errors_and_the_last_attempt_propagate():
    write, calls = failing(1, "08006")  # connection failure: not ours to retry
    with pytest.raises(OperationalError):
        retry_on_deadlock(write)
    assert len(calls) == 1
    write, calls = failing(10, "40P01")
    with pytest.raises(OperationalError):
        retry_on_deadlock(write, attempts=3)
    assert len(calls) == 3
