"""The HTTP side of the model server: a request read off a connection (a body sent whole or in
chunks), routed to its endpoint, recorded as a ``RecordedRequest`` and handed to the owning
server to answer; a client that vanishes or an answer that fails ends it quietly."""

from __future__ import annotations

import json
import logging
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from .channel import Channel, ClientGone
from .wire import Json, error_body

_log = logging.getLogger(__name__)

_ROUTES = {
    ("POST", "/v1/responses"): "responses",
    ("POST", "/v1/responses/compact"): "compact",
    ("POST", "/v1/chat/completions"): "chat",
    ("GET", "/v1/models"): "models",
    ("GET", "/props"): "props",  # llama.cpp's: what the loaded model's template supports
}


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it (headers keep lower-case names)."""

    method: str
    path: str
    body: dict[str, Any] | None
    headers: dict[str, str] = field(repr=False)  # may hold an Authorization header
    endpoint: str | None = None  # "responses", "compact", "chat", "models" or None
    query: str = ""
    raw: bytes = field(default=b"", repr=False)
    connection: int = 0  # the connection it came on: 1 for the server's first, and so on


class Owner(Protocol):
    """What the handler calls back on the server it works for (a ``ModelServer``)."""

    tokens_per_second: float | None
    _stop: threading.Event

    def _track(self, conn: socket.socket, add: bool) -> int: ...

    def _record(self, request: RecordedRequest) -> None: ...

    def _finished(self) -> None: ...

    def _answer(
        self,
        ch: Channel,
        endpoint: str | None,
        method: str,
        path: str,
        body: Json | None,
        headers: dict[str, str],
    ) -> None: ...


class LoopbackHTTPServer(ThreadingHTTPServer):
    """The standard library's threading server, a thread per connection, for one owner."""

    daemon_threads = True
    allow_reuse_address = True
    owner: Owner

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that vanished is normal here (interrupts, cut tests); anything else is a bug
        # worth a log line, not a traceback on stderr.
        _log.debug("model server: error while handling %s", client_address, exc_info=True)


class RequestHandler(BaseHTTPRequestHandler):
    """One connection: each request on it is read, recorded, routed and answered by the
    owner, on a keep-alive connection until the client or an answer closes it."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # one small write per SSE event must leave at once
    server: LoopbackHTTPServer

    connection_number = 0

    def setup(self) -> None:
        super().setup()
        self.connection_number = self.server.owner._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        finally:
            self.server.owner._track(self.connection, add=False)

    def handle(self) -> None:
        try:
            super().handle()
        except (ClientGone, OSError):
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        _log.debug("model server: " + format, *args)

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def do_PATCH(self) -> None:
        self._dispatch()

    def _dispatch(self) -> None:
        owner = self.server.owner
        raw = self._read_body()
        path, _, query = self.path.partition("?")
        path = path.rstrip("/") or "/"
        endpoint = _ROUTES.get((self.command, path))
        body: Json | None = None
        if raw:
            try:
                parsed = json.loads(raw)
                body = parsed if isinstance(parsed, dict) else None
            except ValueError:
                body = None
        headers = {k.lower(): v for k, v in self.headers.items()}
        owner._record(
            RecordedRequest(
                method=self.command,
                path=path,
                body=body,
                headers=headers,
                endpoint=endpoint,
                query=query,
                raw=raw,
                connection=self.connection_number,
            )
        )
        ch = Channel(self.connection, self.wfile, owner._stop, owner.tokens_per_second)
        try:
            owner._answer(ch, endpoint, self.command, path, body, headers)
        except ClientGone:
            ch.keep_alive = False
        except Exception:  # noqa: BLE001 - a server bug must not look like a network failure
            _log.exception("model server: failed to answer %s %s", self.command, path)
            if ch.streaming:
                ch.abort()
            else:
                try:
                    ch.send_json(
                        500, error_body(500, "model server internal error", type_="server_error")
                    )
                except ClientGone:
                    ch.keep_alive = False
        finally:
            owner._finished()
        if not ch.keep_alive:
            self.close_connection = True

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""
