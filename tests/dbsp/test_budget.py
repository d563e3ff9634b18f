"""dbsp/budget.py: a cooperative wall-clock deadline the compilers check per statement,
rule and node; outside a deadline nothing is checked."""
import pytest

from dbsp.budget import BudgetExceeded, deadline
from dbsp.datalog import compile_program
from dbsp.sql import compile_sql

PROGRAM = ".decl e(x: number)\n\nr(x) :- e(x), x > 1.\n"
SCRIPT = "\nCREATE TABLE e (x BIGINT NOT NULL);\nCREATE VIEW v AS SELECT x FROM e WHERE x > 1;\n"


def test_a_spent_budget_stops_the_datalog_compiler_at_its_first_statement():
    with deadline(0), pytest.raises(BudgetExceeded) as stopped:
        compile_program(PROGRAM)
    assert (stopped.value.line, stopped.value.column) == (1, 7)  # the .decl's relation name
    assert "budget of 0 s" in str(stopped.value) and "statement 1" in str(stopped.value)


def test_a_spent_budget_stops_the_sql_compiler_at_its_first_statement():
    with deadline(0), pytest.raises(BudgetExceeded) as stopped:
        compile_sql(SCRIPT)
    assert (stopped.value.line, stopped.value.column) == (2, 1)


def test_within_the_budget_and_outside_any_deadline_the_work_is_done():
    with deadline(3600):
        assert any(n["kind"] == "output" for n in compile_program(PROGRAM)["nodes"])
        assert any(n["kind"] == "output" for n in compile_sql(SCRIPT)["nodes"])
    assert compile_sql(SCRIPT) and compile_program(PROGRAM)
