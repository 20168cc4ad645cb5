"""The model server in its own process, so it never competes for the GIL with the process
being measured.

``python -m bench._server_proc TEXT_FILE COPIES CHUNK_SIZE`` queues ``COPIES`` replies whose text
is the file's content, streamed ``CHUNK_SIZE`` characters per delta as fast as possible;
``python -m bench._server_proc --demo WINDOW`` serves the demo model with a context window of
``WINDOW`` tokens. Either prints ``URL <base_url>`` and serves until its stdin closes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import TracebackType
from typing import Self


class ServerProcess:
    """Context manager around the server subprocess; ``url`` once started."""

    proc: subprocess.Popen[str] | None = None
    url = ""

    def __init__(self, text_file: Path, copies: int, chunk_size: int = 4) -> None:
        self.args = [str(text_file), str(copies), str(chunk_size)]

    def __enter__(self) -> Self:
        from bench._common import REPO

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench._server_proc", *self.args],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("URL "):
            self.proc.kill()
            raise RuntimeError(f"the server process did not start: {line!r}")
        self.url = line.split(" ", 1)[1].strip()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.proc is None:
            return
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class DemoServerProcess(ServerProcess):
    """The demo model in its own process, refusing requests over ``window`` tokens as
    llama.cpp does."""

    def __init__(self, window: int) -> None:
        self.args = ["--demo", str(window)]


def _serve(text_file: str, copies: int, chunk_size: int) -> None:
    from app.demo import ModelServer, Reply

    text = Path(text_file).read_text(encoding="utf-8")
    server = ModelServer(mode="scripted", tokens_per_second=None).start()
    for _ in range(copies):
        server.enqueue(Reply(text=text, chunk_size=chunk_size))
    print(f"URL {server.url}", flush=True)
    try:
        sys.stdin.read()
    finally:
        server.stop()


def _serve_demo(window: int) -> None:
    from app.demo import ModelServer

    server = ModelServer(mode="demo", context_window=window).start()
    print(f"URL {server.url}", flush=True)
    try:
        sys.stdin.read()
    finally:
        server.stop()


if __name__ == "__main__":
    if sys.argv[1] == "--demo":
        _serve_demo(int(sys.argv[2]))
    else:
        _serve(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
