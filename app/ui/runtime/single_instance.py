"""One Coco per profile: a second launch hands over to the running one and exits.

The first instance holds an OS file lock and listens on a local socket (a Unix socket file, or
a named pipe on Windows), both named after the user and the profile's data folder, so
``--data-dir`` profiles and tests never collide. A second launch finds the lock taken,
connects, sends ``focus`` (or ``focus <session-id>``) and exits 0; the first raises its window.

The lock decides who is first, so the first instance can start listening after its window has
painted: Qt's network module is not loaded before the first paint. A second launch that comes
in between waits for the socket (``HANDOVER_SECONDS`` at most). The lock dies with its process,
so a socket left behind by a crashed instance is removed with ``QLocalServer.removeServer``
before listening.
"""

from __future__ import annotations

import importlib
import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QDir, QObject, Signal

from app.core.system.file_lock import FileLock

if TYPE_CHECKING:  # loaded when first used: not before the first paint
    from PySide6.QtNetwork import QLocalServer, QLocalSocket
    from PySide6.QtWidgets import QWidget

log = logging.getLogger(__name__)

FOCUS = "focus"
CONNECT_TIMEOUT_MS = 500
WRITE_TIMEOUT_MS = 1000
# How long a second launch waits for the first to listen (it listens once its window is shown).
HANDOVER_SECONDS = 10.0
_RETRY_SECONDS = 0.05
_MAX_MESSAGE = 1024


def _user_name() -> str:
    """The login name as ``getpass.getuser()`` finds it (the variables it reads, then the
    password database), without importing getpass, which loads the terminal module too
    (0.5 ms before the first paint); the user's home when there is none (some containers)."""
    for variable in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        user = os.environ.get(variable)
        if user:
            return user
    try:
        import pwd

        return pwd.getpwuid(os.getuid())[0]
    except Exception:  # noqa: BLE001 - no pwd (Windows) or no entry for this uid
        return str(Path.home())


def server_name(data_dir: Path, user: str | None = None) -> str:
    """The socket name for ``user``'s profile at ``data_dir``: short (macOS limits socket
    paths to about 100 bytes) and free of path separators."""
    key = f"{user if user is not None else _user_name()}\0{Path(data_dir).expanduser().resolve()}"
    return "coco-" + sha256_hex(key.encode("utf-8"))[:16]


def sha256_hex(data: bytes) -> str:
    """``hashlib.sha256(data).hexdigest()``, from Python's own SHA-256 where it has one:
    ``hashlib`` loads OpenSSL first, 2 ms before the window's first paint, for the same digest
    (the name must stay the same: a running Coco of another version is found by it)."""
    for name in ("_sha2", "_sha256"):  # Python 3.12 on, 3.11
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        return str(module.sha256(data).hexdigest())
    import hashlib

    return hashlib.sha256(data).hexdigest()


def bring_to_front(window: QWidget) -> None:
    """Show ``window`` un-minimised, on top and focused (as far as the window manager allows:
    some refuse focus stealing and flash the task-bar entry instead)."""
    if window.isMinimized():
        window.showNormal()
    window.show()
    window.raise_()
    window.activateWindow()


def focus_message(session_id: str | None = None) -> str:
    """What a second launch sends: ``focus``, or ``focus <id>`` to open a session too."""
    return f"{FOCUS} {session_id}" if session_id else FOCUS


def parse_message(text: str) -> tuple[str, str | None] | None:
    """``(command, argument)`` of a received message, or None if it is not one of ours."""
    text = text.strip()
    command, _, argument = text.partition(" ")
    if command != FOCUS:
        return None
    return command, (argument.strip() or None)


class SingleInstance(QObject):
    """The per-profile instance lock. ``claim()`` once at start-up:

    - True: this is the first instance; ``message_received`` fires when a later launch asks
      to be focused (once it listens: at once, or at :meth:`listen` after ``listen=False``).
    - False: another instance is running and has been sent ``message`` (``handed_over``
      says whether it took it); exit.
    """

    message_received = Signal(str)

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.handed_over = False
        self._lock: FileLock | None = None
        self._server: QLocalServer | None = None
        self._buffers: dict[QLocalSocket, bytes] = {}

    @property
    def lock_path(self) -> Path:
        """The profile's lock file, beside the socket in the user's temporary folder."""
        return Path(QDir.tempPath()) / f"{self.name}.lock"

    @property
    def is_primary(self) -> bool:
        return self._lock is not None and self._lock.held

    @property
    def is_listening(self) -> bool:
        return self._server is not None and self._server.isListening()

    def claim(self, message: str = FOCUS, *, listen: bool = True) -> bool:
        """Become the running instance, or hand ``message`` to the one already running.

        With ``listen=False`` the first instance holds the profile but does not listen until
        :meth:`listen`, so the caller can show its window first."""
        deadline = time.monotonic() + HANDOVER_SECONDS
        while True:
            try:
                self._lock = FileLock.try_acquire(self.lock_path)
            except OSError as exc:  # no temporary folder to lock in: the socket alone decides
                log.warning("Cannot lock %s (%s); relying on the socket", self.lock_path, exc)
                return self._claim_by_socket(message)
            if self._lock is not None:
                if listen:
                    self.listen()
                return True
            # Another instance holds the profile: it is alive (the lock dies with it), and
            # listens once its window is shown.
            if self._send(message):
                self.handed_over = True
                return False
            if time.monotonic() >= deadline:
                log.warning("A running Coco holds this profile but did not answer")
                return False
            time.sleep(_RETRY_SECONDS)

    def _claim_by_socket(self, message: str) -> bool:
        if self._send(message):
            self.handed_over = True
            return False
        if self.listen():
            return True
        # Lost a race with another launch that started listening in between: hand over to it.
        self.handed_over = self._send(message)
        return not self.handed_over

    def _send(self, message: str) -> bool:
        from PySide6.QtNetwork import QLocalSocket

        socket = QLocalSocket()
        socket.connectToServer(self.name)
        if not socket.waitForConnected(CONNECT_TIMEOUT_MS):
            return False
        socket.write((message.strip() + "\n").encode("utf-8"))
        delivered = socket.waitForBytesWritten(WRITE_TIMEOUT_MS)
        socket.disconnectFromServer()
        if socket.state() != QLocalSocket.LocalSocketState.UnconnectedState:
            socket.waitForDisconnected(WRITE_TIMEOUT_MS)
        if not delivered:
            log.warning("A running Coco accepted the connection but not the message")
        return True

    def listen(self) -> bool:
        """Start taking later launches' messages (idempotent); False if the socket cannot be
        made, which only costs the hand-over (the lock still keeps one instance)."""
        if self._server is not None:
            return True
        from PySide6.QtNetwork import QLocalServer

        server = QLocalServer(self)
        # Only this user may connect (the socket file's mode on Unix, the pipe's ACL on Windows).
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        if not server.listen(self.name):
            # Nobody answered on the name, so whatever holds it is stale (a crashed instance).
            QLocalServer.removeServer(self.name)
            if not server.listen(self.name):
                log.warning("Cannot listen for other launches: %s", server.errorString())
                server.deleteLater()
                return False
        server.newConnection.connect(self._accept)
        self._server = server
        return True

    def _accept(self) -> None:
        assert self._server is not None
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            if socket is None:
                break
            self._buffers[socket] = b""
            # Bound methods, not lambdas: Qt drops the connections when this object dies.
            socket.readyRead.connect(self._on_ready_read)
            socket.disconnected.connect(self._on_disconnected)
            if socket.bytesAvailable():
                self._read(socket)

    def _on_ready_read(self) -> None:
        socket = self.sender()
        if socket in self._buffers:
            self._read(socket)

    def _on_disconnected(self) -> None:
        socket = self.sender()
        if socket in self._buffers:
            self._finish(socket)

    def _read(self, socket: QLocalSocket) -> None:
        data = self._buffers.get(socket, b"") + bytes(socket.readAll().data())
        while b"\n" in data:
            line, data = data.split(b"\n", 1)
            self._deliver(line)
        if len(data) > _MAX_MESSAGE:  # not one of ours; do not buffer without bound
            data = b""
            socket.abort()
        self._buffers[socket] = data

    def _finish(self, socket: QLocalSocket) -> None:
        rest = self._buffers.pop(socket, b"") + bytes(socket.readAll().data())
        if rest.strip():
            self._deliver(rest)
        socket.deleteLater()

    def _deliver(self, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").strip()
        if text:
            self.message_received.emit(text)

    def release(self) -> None:
        """Stop listening (the socket name is freed for the next launch)."""
        for socket in list(self._buffers):
            socket.readyRead.disconnect(self._on_ready_read)
            socket.disconnected.disconnect(self._on_disconnected)
            socket.abort()
            socket.deleteLater()
        self._buffers.clear()
        if self._server is not None:
            self._server.close()
            self._server.deleteLater()
            self._server = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None
