"""An attachment that cannot be sent, said in words."""

from __future__ import annotations


class AttachmentError(Exception):
    """A file that cannot be attached; ``str()`` is the message for the user."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def size_words(size: int) -> str:
    """A byte count as people read it ("812 bytes", "4.2 KB", "20.0 MB", "2.0 GB")."""
    if size < 1024:
        return f"{size} bytes"
    value = float(size)
    for unit in ("KB", "MB", "GB", "TB"):
        value /= 1024
        if value < 1024 or unit == "TB":
            return f"{value:.1f} {unit}"
    return f"{value:.1f} TB"  # pragma: no cover - the loop always returns
