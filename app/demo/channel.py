"""One HTTP exchange's output side: unary JSON, chunked SSE, pacing, abrupt drops.

Every wait is interruptible: it ends early when the server stops or the client goes away, and
then raises ``ClientGone`` so the handler can end quietly.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from http import HTTPStatus
from typing import Any

from .wire import Json, new_id


class ClientGone(Exception):
    """The client disconnected (or the server is stopping): stop writing, end quietly."""


_DISCONNECT_ERRORS = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, OSError)


class Channel:
    """Writes one response on a handler's socket; raw HTTP/1.1 so faults can break the rules."""

    def __init__(
        self,
        sock: socket.socket,
        wfile: Any,
        stop: threading.Event,
        tokens_per_second: float | None,
    ) -> None:
        self._sock = sock
        self._wfile = wfile
        self._stop = stop
        self._tps = tokens_per_second if tokens_per_second and tokens_per_second > 0 else None
        self._paced_tokens = 0.0
        self._pace_start: float | None = None
        self._sequence = 0
        self.streaming = False
        self.keep_alive = True

    # ---------------------------------------------------------------------------- unary

    def send_json(self, status: int, payload: Json, headers: dict[str, str] | None = None) -> None:
        """A complete JSON response with its Content-Length."""
        body = json.dumps(payload).encode("utf-8")
        self.send_bytes(status, body, "application/json", headers)

    def send_bytes(
        self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        """A complete response with an arbitrary body."""
        head = self._head(
            status,
            {"Content-Type": content_type, "Content-Length": str(len(body)), **(headers or {})},
        )
        self._write(head + body)

    def send_truncated(self, status: int, body: bytes, content_type: str) -> None:
        """Promise ``len(body)`` bytes, send half, drop the connection."""
        head = self._head(status, {"Content-Type": content_type, "Content-Length": str(len(body))})
        self._write(head + body[: max(1, len(body) // 2)])
        self.abort()

    # --------------------------------------------------------------------------- streams

    def start_stream(self) -> None:
        """Send the headers of a chunked ``text/event-stream`` response."""
        head = self._head(
            200,
            {
                "Content-Type": "text/event-stream; charset=utf-8",
                "Cache-Control": "no-cache",
                "Transfer-Encoding": "chunked",
            },
        )
        self._write(head)
        self.streaming = True

    def event(self, event_type: str, payload: Json) -> None:
        """One Responses SSE event; ``type`` and ``sequence_number`` are filled in."""
        data = {"type": event_type, **payload, "sequence_number": self._sequence}
        self._sequence += 1
        self.raw_event(f"event: {event_type}\ndata: {json.dumps(data)}\n\n")

    def data(self, payload: Json | str) -> None:
        """One Chat Completions SSE line (``data: …``)."""
        text = payload if isinstance(payload, str) else json.dumps(payload)
        self.raw_event(f"data: {text}\n\n")

    def raw_event(self, text: str) -> None:
        """One chunk carrying ``text`` verbatim (one SSE event per chunk)."""
        encoded = text.encode("utf-8")
        self._write(f"{len(encoded):X}\r\n".encode("ascii") + encoded + b"\r\n")

    def end_stream(self) -> None:
        """The terminating zero-length chunk: a clean end of the stream."""
        self._write(b"0\r\n\r\n")

    def abort(self) -> None:
        """Drop the connection mid-response (no terminating chunk, no more bytes)."""
        self.keep_alive = False
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # ----------------------------------------------------------------------------- time

    def wait(self, seconds: float) -> None:
        """Sleep ``seconds`` unless the server stops or the client leaves (then ClientGone)."""
        deadline = time.monotonic() + seconds
        while True:
            remaining = deadline - time.monotonic()
            if self._stop.is_set():
                raise ClientGone("server stopping")
            if remaining <= 0:
                return
            step = min(remaining, 0.05)
            if self._client_left(step):
                raise ClientGone("client disconnected")

    def pace(self, tokens: int, extra_delay: float = 0.0) -> None:
        """Hold back output so it flows at the configured tokens per second."""
        if extra_delay > 0:
            self.wait(extra_delay)
        if self._tps is None:
            if self._stop.is_set():
                raise ClientGone("server stopping")
            return
        now = time.monotonic()
        if self._pace_start is None:
            self._pace_start = now
        self._paced_tokens += tokens
        target = self._pace_start + self._paced_tokens / self._tps
        if target > now:
            self.wait(target - now)

    # --------------------------------------------------------------------------- helpers

    def _client_left(self, timeout: float) -> bool:
        """Wait up to ``timeout`` for the socket to turn readable; EOF there means gone."""
        try:
            readable, _, _ = select.select([self._sock], [], [], timeout)
            if not readable:
                return False
            return self._sock.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def _head(self, status: int, headers: dict[str, str]) -> bytes:
        try:
            reason = HTTPStatus(status).phrase
        except ValueError:
            reason = "Unknown"
        lines = [
            f"HTTP/1.1 {status} {reason}",
            f"Date: {time.strftime('%a, %d %b %Y %H:%M:%S GMT', time.gmtime())}",
            "Server: coco-demo",
            f"x-request-id: {new_id('req')}",
        ]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        if not self.keep_alive:
            lines.append("Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def _write(self, data: bytes) -> None:
        try:
            self._wfile.write(data)
            self._wfile.flush()
        except _DISCONNECT_ERRORS as exc:
            self.keep_alive = False
            raise ClientGone(str(exc)) from exc
