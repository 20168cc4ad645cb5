"""Attachment files stored once beside the session, named by the SHA-256 of their bytes
(``<session id>.files/<hash>.<ext>`` next to the rollout): the rollout names them, never
holds their bytes. Images are kept ready to send as data URLs (encoded once, in a worker)."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

EXTENSIONS = {
    "image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif",
    "application/pdf": "pdf", "text/plain": "txt",
}
_B64_PIECE = 3 * 2**16  # bytes encoded per call (a multiple of 3: the pieces join up)


def files_folder(rollout: Path) -> Path:
    """The folder of a session's attachments, beside its rollout."""
    return rollout.with_name(rollout.stem + ".files")


def content_name(data: bytes, mime: str) -> str:
    """The file name of ``data`` in the store: its hash and an extension for its kind."""
    return f"{hashlib.sha256(data).hexdigest()}.{EXTENSIONS.get(mime, 'bin')}"


class AttachmentStore:
    """One session's attachment folder and the data URLs of the images it sends."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._urls: dict[str, str] = {}

    def path(self, name: str) -> Path:
        return self.folder / name

    def put(self, data: bytes, mime: str) -> str:
        """Store ``data`` (once: the same bytes are never written twice); its file name.
        Written to a temporary file and renamed, so a crash never leaves half a file."""
        name = content_name(data, mime)
        target = self.folder / name
        if target.is_file() and target.stat().st_size == len(data):
            return name
        self.folder.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=self.folder, prefix=".part-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(temp, target)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        return name

    def remember_url(self, name: str, data: bytes, mime: str) -> None:
        self._urls[name] = data_url(data, mime)

    def data_url(self, name: str) -> str | None:
        """An image's data URL if it is loaded (see :meth:`load`), else None."""
        return self._urls.get(name)

    def load(self, names: list[tuple[str, str]]) -> None:
        """Read and encode the named images not loaded yet (in a worker thread); a missing or
        damaged file stays unloaded and is sent as its description."""
        for name, mime in names:
            if name in self._urls:
                continue
            try:
                data = self.path(name).read_bytes()
            except OSError:
                continue
            if content_name(data, mime) != name:
                continue  # damaged: its bytes no longer match their hash
            self._urls[name] = data_url(data, mime)

    def is_intact(self, name: str) -> bool:
        """Whether a stored file is there (its size is checked on reading, not here)."""
        return bool(name) and self.path(name).is_file()


def share_files(source: Path, target: Path, names: Iterable[str]) -> int:
    """Put the named stored files of folder ``source`` in folder ``target`` (a fork's): linked
    where the file system allows, else copied; a file already there or gone is skipped. How
    many were put there."""
    shared = 0
    for name in dict.fromkeys(names):
        origin, copy = source / name, target / name
        if not name or copy.exists() or not origin.is_file():
            continue
        target.mkdir(parents=True, exist_ok=True)
        try:
            os.link(origin, copy)  # the same bytes, stored once on disk
        except OSError:
            shutil.copyfile(origin, copy)
        shared += 1
    return shared


def data_url(data: bytes, mime: str) -> str:
    """``data`` as a base64 data URL, encoded a piece at a time: encoding a screenshot's
    megabytes in one call held the interpreter 3 ms, the window's thread waiting meanwhile."""
    view = memoryview(data)
    pieces = [f"data:{mime};base64,"]
    pieces += [
        base64.b64encode(view[start:start + _B64_PIECE]).decode("ascii")
        for start in range(0, len(data), _B64_PIECE)
    ]
    return "".join(pieces)
