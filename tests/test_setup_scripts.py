"""The setup scripts find a Python >= 3.12 or say clearly what to install."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.one_backend  # its subject does not depend on the database: run once, on SQLite

ROOT = Path(__file__).resolve().parents[1]


def find_python(tmp_path, path_dirs, extra_env=None):
    env = {"HOME": str(tmp_path), "PATH": os.pathsep.join(str(d) for d in path_dirs), **(extra_env or {})}
    script = f'source "{ROOT}/scripts/lib.sh"; find_python; echo "FOUND $PY"'
    return subprocess.run(["/bin/bash", "-c", script], env=env, capture_output=True, text=True, timeout=30)


def fake_python(directory: Path, version: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    exe = directory / "python3"
    major, minor = version.split(".")[:2]
    exe.write_text(f"#!/bin/sh\nexit $([ {minor} -ge 12 ] && [ {major} -ge 3 ] && echo 0 || echo 1)\n")
    exe.chmod(0o755)
    return exe


def tools(tmp_path) -> Path:
    """A PATH entry with only the tools lib.sh needs besides Python."""
    d = tmp_path / "tools"
    d.mkdir(exist_ok=True)
    for tool in ("dirname", "mkdir"):
        (d / tool).symlink_to(shutil.which(tool))
    return d


def test_too_old_python_is_refused_with_instructions(tmp_path):
    bin_dir = tmp_path / "bin"
    fake_python(bin_dir, "3.11")
    result = find_python(tmp_path, [bin_dir, tools(tmp_path)])
    assert result.returncode != 0
    assert "needs Python 3.12 or newer" in result.stderr
    assert "PYTHON=" in result.stderr  # says how to point at one


def test_python_env_var_is_honoured(tmp_path):
    result = find_python(tmp_path, ["/usr/bin", "/bin"], {"PYTHON": sys.executable})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"FOUND {sys.executable}"


def test_pyenv_versions_are_found(tmp_path):
    pyenv_bin = tmp_path / ".pyenv" / "versions" / "3.13.0" / "bin"
    pyenv_bin.mkdir(parents=True)
    (pyenv_bin / "python").symlink_to(sys.executable)
    old = tmp_path / "bin"
    fake_python(old, "3.11")
    result = find_python(tmp_path, [old, tools(tmp_path)])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"FOUND {pyenv_bin / 'python'}"
