"""The layers hold: the core imports no Qt and nothing of the window, the window uses the
core's public services rather than its internals, and no packages import each other in a circle
(contracts in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_import_contracts_are_kept() -> None:
    command = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(command), "--config", str(REPO / "pyproject.toml"), "--no-cache"],
        check=False, cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 kept, 0 broken" in result.stdout
    # No back-channel is excused: every contract holds without an ignored import.
    assert "ignored" not in result.stdout, result.stdout
