"""The loopback model server: OpenAI wire protocol over the standard library's HTTP server.

Two modes. *scripted*: every request to ``/responses``, ``/chat/completions`` or
``/responses/compact`` consumes the next item queued for that endpoint (FIFO), so tests drive the
real ``openai`` client through exact scenarios, faults included. *demo*: the offline demo model
answers (queued items still go first), so a new user can chat without a key or a network.
Every request is recorded for assertions.

``ModelServer`` holds what a server is and keeps: its settings, its life cycle, the queued
items and the recorded requests. ``handler`` reads requests off its connections, ``answering``
answers them.
"""

from __future__ import annotations

import socket
import threading
from collections import deque
from types import TracebackType
from typing import Any, Literal, Self

from .answering import Answerer
from .channel import Channel
from .handler import LoopbackHTTPServer, RecordedRequest, RequestHandler
from .model.demo_model import DemoModel
from .script import CompactReply, Fault, Reply, ScriptItem
from .wire import Json, error_body, now

Mode = Literal["scripted", "demo"]
QUEUE_ENDPOINTS = ("responses", "chat", "compact")
_DEMO_WINDOW = 16000
_UNSET: Any = object()


class ModelServer:
    """An OpenAI-compatible server on loopback; ``start()`` it, point ``base_url`` at ``url``.

    ``context_window``: requests whose estimated input exceeds it get the API's
    ``context_length_exceeded`` 400 (checked before any queued item is consumed). Defaults to
    16000 in demo mode and to no limit in scripted mode. ``tokens_per_second`` paces streamed
    deltas (None: as fast as possible). ``demo_model`` answers in demo mode (a
    :class:`DemoModel` by default; a subclass may summarise its own way).
    """

    def __init__(
        self,
        mode: Mode = "scripted",
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        context_window: int | None = _UNSET,
        tokens_per_second: float | None = None,
        model: str = "coco-demo",
        record_limit: int | None = _UNSET,
        demo_model: DemoModel | None = None,
    ) -> None:
        if mode not in ("scripted", "demo"):
            raise ValueError(f"mode must be 'scripted' or 'demo', not {mode!r}")
        self.mode: Mode = mode
        self.host = host
        self.context_window: int | None = (
            (_DEMO_WINDOW if mode == "demo" else None)
            if context_window is _UNSET
            else context_window
        )
        self.tokens_per_second = tokens_per_second
        self.model = model
        # What ``GET /props`` answers, as llama.cpp does (None: 404, as other servers do);
        # a test sets ``{"chat_template_caps": {"supports_tools": False}}`` for a model
        # whose template has no tool support.
        self.props: dict[str, Any] | None = None
        # A long-running demo server must not grow without bound; tests keep everything.
        limit = (1000 if mode == "demo" else None) if record_limit is _UNSET else record_limit
        self._port = port
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._queues: dict[str, deque[ScriptItem]] = {e: deque() for e in QUEUE_ENDPOINTS}
        self._requests: deque[RecordedRequest] = deque(maxlen=limit)
        self._connections: set[socket.socket] = set()
        self._accepted = 0  # connections accepted since the server was made
        self._active = 0  # requests being answered right now
        self._stop = threading.Event()
        self._httpd: LoopbackHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._answerer = Answerer(demo_model or DemoModel(), self._take, now())

    # ------------------------------------------------------------------------- lifecycle

    def start(self) -> Self:
        """Bind and serve in a daemon thread; returns ``self``. Idempotent."""
        if self._httpd is not None:
            return self
        self._stop = threading.Event()
        httpd = LoopbackHTTPServer((self.host, self._port), RequestHandler)
        httpd.owner = self
        self._httpd = httpd
        self._port = httpd.server_address[1]
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"coco-model-server:{self._port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving: running streams end, open connections close. Idempotent."""
        httpd = self._httpd
        if httpd is None:
            return
        self._stop.set()
        httpd.shutdown()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port (known once started)."""
        if self._httpd is None and self._port == 0:
            raise RuntimeError("the server is not started")
        return self._port

    @property
    def url(self) -> str:
        """The ``base_url`` for the openai client, e.g. ``http://127.0.0.1:8123/v1``."""
        return f"http://{self.host}:{self.port}/v1"

    # --------------------------------------------------------------------------- scripts

    def enqueue(self, item: ScriptItem, endpoint: str | None = None) -> None:
        """Queue the answer to one future request on ``endpoint`` (responses, chat, compact).

        Without an endpoint a ``CompactReply`` goes to "compact", anything else to "responses".
        """
        if endpoint is None:
            endpoint = "compact" if isinstance(item, CompactReply) else "responses"
        if endpoint not in QUEUE_ENDPOINTS:
            raise ValueError(f"endpoint must be one of {QUEUE_ENDPOINTS}, not {endpoint!r}")
        if not isinstance(item, (Reply, Fault, CompactReply)):
            raise TypeError(f"can only queue Reply, Fault or CompactReply, not {type(item)!r}")
        with self._lock:
            self._queues[endpoint].append(item)

    def queued(self, endpoint: str = "responses") -> int:
        """How many queued items ``endpoint`` has not consumed yet."""
        with self._lock:
            return len(self._queues[endpoint])

    def _take(self, endpoint: str) -> ScriptItem | None:
        with self._lock:
            queue = self._queues[endpoint]
            return queue.popleft() if queue else None

    # ------------------------------------------------------------------------- recording

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    def requests_to(self, endpoint: str) -> list[RecordedRequest]:
        """Only the requests to ``endpoint`` ("responses" is ``/v1/responses`` exactly)."""
        with self._lock:
            return [r for r in self._requests if r.endpoint == endpoint]

    def wait_for_requests(
        self, n: int, endpoint: str | None = None, timeout: float = 5.0
    ) -> list[RecordedRequest]:
        """Block until ``n`` requests (to ``endpoint``, or any) arrived; TimeoutError if not."""

        def matching() -> list[RecordedRequest]:
            return [r for r in self._requests if endpoint is None or r.endpoint == endpoint]

        with self._changed:
            if not self._changed.wait_for(lambda: len(matching()) >= n, timeout=timeout):
                got = len(matching())
                raise TimeoutError(
                    f"expected {n} request(s) to {endpoint or 'the server'} "
                    f"within {timeout}s, got {got}"
                )
            return matching()

    @property
    def active_requests(self) -> int:
        """How many requests are being answered right now (open streams included)."""
        with self._lock:
            return self._active

    def wait_idle(self, timeout: float = 5.0) -> None:
        """Block until no request is being answered (e.g. a client closed its stream)."""
        with self._changed:
            if not self._changed.wait_for(lambda: self._active == 0, timeout=timeout):
                raise TimeoutError(
                    f"{self._active} request(s) still being answered after {timeout}s"
                )

    def _record(self, request: RecordedRequest) -> None:
        with self._changed:
            self._requests.append(request)
            self._active += 1
            self._changed.notify_all()

    def _finished(self) -> None:
        with self._changed:
            self._active -= 1
            self._changed.notify_all()

    def _track(self, conn: socket.socket, add: bool) -> int:
        """Adds or drops an open connection; the number of connections accepted so far."""
        with self._lock:
            if add:
                self._connections.add(conn)
                self._accepted += 1
            else:
                self._connections.discard(conn)
            return self._accepted

    # --------------------------------------------------------------------------- answers

    def _answer(
        self,
        ch: Channel,
        endpoint: str | None,
        method: str,
        path: str,
        body: Json | None,
        headers: dict[str, str],
    ) -> None:
        """Called by the handler for each request; answered as this server's settings say now."""
        if endpoint == "props":
            if self.props is None:  # a server that is not llama.cpp
                ch.send_json(404, error_body(404, "File Not Found", type_="not_found_error"))
            else:
                ch.send_json(200, self.props)
            return
        self._answerer.answer(
            ch,
            endpoint,
            method,
            path,
            body,
            headers,
            model=self.model,
            scripted=self.mode == "scripted",
            context_window=self.context_window,
        )
