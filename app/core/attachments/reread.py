"""A file attached read again where a job on it runs (the worker process, see
``system.worker_process``): its bytes are not copied across from the window's process."""

from __future__ import annotations

from .errors import AttachmentError


def read_again(path: str, size: int, name: str) -> bytes:
    """The bytes of the file at ``path``; ``size``: its size when it was first read, so that
    a file changed meanwhile is not read as another. :class:`AttachmentError` in words."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise AttachmentError(f"{name} could not be read: {exc.strerror or exc}.") from exc
    if len(data) != size:
        raise AttachmentError(f"{name} changed while it was read: attach it again.")
    return data
