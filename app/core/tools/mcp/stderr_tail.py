"""What a local MCP server writes on stderr: read as it comes (a server that floods it never
blocks on a full pipe), the last lines kept for the settings page, the rest dropped."""

from __future__ import annotations

import os
import threading
from collections import deque
from typing import IO

MAX_LINES = 20
MAX_LINE_CHARS = 400
_CHUNK = 65536


class StderrTail:
    """A pipe whose write end a server gets as stderr; a daemon thread drains the read end."""

    def __init__(self, secrets: list[str] | None = None) -> None:
        self._lines: deque[str] = deque(maxlen=MAX_LINES)
        self._partial = ""
        self._lock = threading.Lock()
        self._secrets = [s for s in (secrets or []) if s]
        read_fd, write_fd = os.pipe()
        self._writer: IO[str] | None = os.fdopen(write_fd, "w")
        self._thread = threading.Thread(
            target=self._drain, args=(read_fd,), name="mcp-stderr", daemon=True
        )
        self._thread.start()

    @property
    def writer(self) -> IO[str]:
        """The write end, given to the server process as its stderr."""
        assert self._writer is not None, "the write end was already handed over"
        return self._writer

    def handed_over(self) -> None:
        """The server has its copy: ours is closed, so the pipe ends when the server does."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def drained(self, timeout: float) -> None:
        """Wait (a worker thread's call) until all the server wrote is read, at most
        ``timeout`` seconds: a server that failed is reported with its last words."""
        self.handed_over()
        self._thread.join(timeout)

    def lines(self) -> list[str]:
        """The last lines written (secrets scrubbed), the oldest first."""
        with self._lock:
            lines = list(self._lines)
            if self._partial.strip():
                lines.append(self._partial[:MAX_LINE_CHARS])
        return [self._scrub(line) for line in lines[-MAX_LINES:]]

    def _scrub(self, line: str) -> str:
        for secret in self._secrets:
            line = line.replace(secret, "[redacted]")
        return line

    def _drain(self, fd: int) -> None:
        try:
            while chunk := os.read(fd, _CHUNK):
                self._take(chunk.decode("utf-8", "replace"))
        except OSError:
            pass
        finally:
            os.close(fd)

    def _take(self, text: str) -> None:
        with self._lock:
            pieces = (self._partial + text).split("\n")
            self._partial = pieces.pop()[-MAX_LINE_CHARS:]
            for piece in pieces[-MAX_LINES:]:
                if piece.strip():
                    self._lines.append(piece.rstrip("\r")[:MAX_LINE_CHARS])
