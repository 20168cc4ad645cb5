"""The shared llama.cpp server (``../shared/tools/llama-server/start.sh``, Gemma 3 270M) started
on loopback and stopped again: for ``tests/real`` and ``bench_retention``'s llama mode."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
from pathlib import Path

from bench._common import REPO

FALLBACK_DIR = Path("/work/shared/tools/llama-server")


def llama_server_dir() -> Path | None:
    """The folder holding ``start.sh``: ``COCO_LLAMA_SERVER_DIR``, else ``../shared`` beside the
    repo, else the fallback (a git worktree has no ``../shared``); None when there is none."""
    candidates = []
    if os.environ.get("COCO_LLAMA_SERVER_DIR"):
        candidates.append(Path(os.environ["COCO_LLAMA_SERVER_DIR"]))
    candidates += [REPO.parent / "shared" / "tools" / "llama-server", FALLBACK_DIR]
    for folder in candidates:
        if (folder / "start.sh").is_file():
            return folder
    return None


def llama_work_dir() -> Path:
    """Where ``start.sh`` assembles the model and leaves each server's PID file."""
    return Path(os.environ.get("LLAMA_WORK") or Path(tempfile.gettempdir()) / "coco-llama")


def start_llama(folder: Path, port: int, context: int, template: str) -> str:
    """Start a server on ``port``; its base URL once it is healthy. Raises
    ``subprocess.CalledProcessError`` (with the script's output) when it does not start."""
    done = subprocess.run(
        [str(folder / "start.sh"), str(port), str(context), template],
        check=True, capture_output=True, text=True, timeout=600,
        env={**os.environ, "LLAMA_WORK": str(llama_work_dir())},
    )
    return done.stdout.strip().splitlines()[-1]


def stop_llama(port: int) -> None:
    """Stop the server started on ``port`` (nothing happens when there is none)."""
    with contextlib.suppress(OSError, ValueError):
        os.kill(int((llama_work_dir() / f"server-{port}.pid").read_text()), signal.SIGTERM)
