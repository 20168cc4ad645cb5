"""``coco --self-test`` from source: the real window, the demo model, a manual and an automatic
compaction, checks on transcript and history; exit 0. A broken step exits 1 and names it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.selftest import MESSAGES

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def run_app(
    *args: str, code: str | None = None, timeout: float = 90
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    command = [sys.executable, "-c", code] if code else [sys.executable, "-m", "app", *args]
    return subprocess.run(command, check=False, cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_self_test_passes_from_source(tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    result = run_app("--self-test", "--data-dir", str(profile))
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    for step in ("manual compaction", "automatic compaction", "transcript keeps everything",
                 "history is compacted", "reopen the session"):
        assert f"ok    {step}" in out
    assert "PASS  self-test" in out
    # It ran in the profile it was given: a session file and a log there, nothing elsewhere.
    sessions = list((profile / "sessions").glob("*.jsonl"))
    assert len(sessions) == 1
    log = (profile / "logs" / "coco.log").read_text(encoding="utf-8")
    assert "Self-test starting" in log
    assert not any(message in log for message in MESSAGES)  # no message contents at INFO


def test_a_failing_step_exits_1_and_names_it(tmp_path: Path) -> None:
    code = (
        "import app.selftest as s, pathlib, sys\n"
        "s.SELF_TEST_AUTO_COMPACT_LIMIT = 10**6  # auto compaction can never fire\n"
        f"sys.exit(s.run_self_test(pathlib.Path({str(tmp_path / 'p')!r})))\n"
    )
    result = run_app(code=code)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAIL  automatic compaction" in result.stdout
    assert "PASS" not in result.stdout
