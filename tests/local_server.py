"""A loopback stand-in for a local model server's own API (llama.cpp's ``/props`` and the
OpenAI-compatible ``/v1/models``), for the tests of the core's connection test and probe."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self


class LocalServer:
    """Answers ``GET /props`` with ``props`` and ``GET /v1/models`` with ``models``; 404 for
    anything else. Records the paths asked and their Authorization headers."""

    def __init__(self, props: dict[str, Any], models: list[str]) -> None:
        self.props = props
        self.models = models
        self.seen: list[tuple[str, str]] = []  # (path, authorization header)
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.seen.append((self.path, self.headers.get("Authorization", "")))
                if self.path == "/props":
                    self._answer(200, owner.props)
                elif self.path == "/v1/models":
                    rows = [{"id": m, "object": "model", "owned_by": "local"} for m in owner.models]
                    self._answer(200, {"object": "list", "data": rows})
                else:
                    self._answer(404, {"error": "not found"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                owner.seen.append((self.path, self.headers.get("Authorization", "")))
                self._answer(404, {"error": "not found"})

            def _answer(self, status: int, body: object) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()


LLAMA_PROPS = {
    "default_generation_settings": {"n_ctx": 4096},
    "chat_template_caps": {"supports_tools": False},
}
