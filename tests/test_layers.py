"""The import contracts in .importlinter hold: the Django side in layers (workers > runs >
circuits > dbsp), the engine free of the web side, the Spark backend above the operators,
and no import loops in any package. Run by import-linter on the real tree; the planted
tests show each contract catches its violation on a copy of the tree."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.one_backend  # its subject does not depend on the database: run once, on SQLite

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("dbsp", "circuits", "runs", "connectors", "workers", "dbspweb")


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()",
         "--no-cache"],
        cwd=root, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=120,
    )


def test_the_import_contracts_hold():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 kept, 0 broken" in result.stdout


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A copy of the packages and the contracts, to plant violations in."""
    copy = tmp_path_factory.mktemp("tree")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, copy / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / ".importlinter", copy / ".importlinter")
    return copy


@pytest.mark.parametrize("module, line, broken", [
    # circuits reaching up into runs (the old services -> workers.dispatch shape)
    ("circuits/services.py", "from runs import lifecycle", "Django side in layers"),
    # runs importing the Celery tasks instead of going through runs/dispatch.py
    ("runs/lifecycle.py", "from workers.tasks import stop_run", "Django side in layers"),
    # the engine importing Django
    ("dbsp/plan.py", "from django.conf import settings", "The engine (dbsp) imports no web framework"),
    # the engine's library reaching the connectors: only dbsp/__main__.py -> connectors.standalone is ignored
    ("dbsp/plan.py", "from connectors import standalone", "The engine (dbsp) imports no web framework"),
    ("dbsp/__main__.py", "from connectors import registry", "The engine (dbsp) imports no web framework"),
    # an operator importing the Spark backend (the old lazy `from ..spark.zsets import WEIGHT`)
    ("dbsp/operators/distinct.py", "from ..spark.zsets import WEIGHT", "The Spark backend depends on the operators"),
    # a loop inside one layer (the old dispatch -> tasks -> ticks -> dispatch)
    ("workers/dispatch.py", "from . import tasks", "No import loops"),
    # the old validate <-> fixedpoint loop
    ("dbsp/operators/fixedpoint.py", "from ..validate import check_scope", "No import loops"),
])
def test_a_planted_upward_import_or_loop_breaks_a_contract(tree, module, line, broken):
    path = tree / module
    original = path.read_text()
    path.write_text(original + f"\n\ndef _planted():\n    {line}\n")  # a lazy import counts too
    try:
        result = lint_imports(tree)
    finally:
        path.write_text(original)
    assert result.returncode == 1, result.stdout
    broken_section = result.stdout.split("Broken contracts", 1)[1]
    assert broken in broken_section, result.stdout
