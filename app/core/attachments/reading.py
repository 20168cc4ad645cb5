"""A file on disk read into an attachment part: its kind told from its bytes, its text or its
image made ready, its bytes stored by hash. Runs in a worker thread; every refusal is an
:class:`AttachmentError` in words, and nothing is stored for a refused file."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

from ..items import ATTACHMENT
from ..system.worker_process import WorkerProcessDied, run_in_process
from .documents import decode_text, pdf_file_text
from .errors import AttachmentError, size_words
from .images import prepare_image, prepare_image_file
from .parts import Part
from .store import AttachmentStore

T = TypeVar("T")
# The largest file of each kind Coco reads (a model could not take more in any case).
LIMITS = {"text": 16 * 2**20, "pdf": 256 * 2**20, "image": 64 * 2**20}
_IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
_IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".webp", ".gif"}


def sniff_kind(head: bytes, path: Path) -> str:
    """``text``, ``pdf`` or ``image``, from the file's first bytes (its name only breaks a
    tie: a damaged image named ``.png`` is refused as an image, not read as text)."""
    if head.startswith(b"%PDF-"):
        return "pdf"
    if any(head.startswith(magic) for magic, _ in _IMAGE_MAGIC):
        return "image"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image"
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        return "pdf"
    if suffix in _IMAGE_SUFFIXES:
        return "image"
    return "text"


def image_attachment(
    data: bytes, name: str, store: AttachmentStore, path: Path | None = None
) -> Part:
    """The part for an image's bytes (a file's, or a tool's output), stored in ``store`` with
    the copy scaled for sending; :class:`AttachmentError` in words when it cannot be sent.
    An image from a file (``path``) is decoded and scaled in the worker process (Pillow
    held the window's interpreter for 30-90 ms of a 4K screenshot's)."""
    if path is None:
        image = prepare_image(data, name)
    else:
        image = _in_process(prepare_image_file, path, data, name, "image reader")
        if not image.sent:  # sent as it is: its bytes stayed here
            image = replace(image, sent=data)
    original_mime = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp",
                     "GIF": "image/gif"}[image.format]
    part: Part = {
        "type": ATTACHMENT, "kind": "image", "name": name, "size": len(data),
        "mime": original_mime, "width": image.width, "height": image.height,
        "sent_width": image.sent_width, "sent_height": image.sent_height,
        "tokens": image.tokens, "file": store.put(data, original_mime),
    }
    if image.sent is data:
        part.update(sent_file=part["file"], sent_mime=original_mime)
    else:
        part.update(sent_file=store.put(image.sent, image.sent_mime), sent_mime=image.sent_mime)
    store.remember_url(part["sent_file"], image.sent, part["sent_mime"])
    return part


def read_attachment(path: Path, store: AttachmentStore) -> Part:
    """The part for the file at ``path``, its bytes stored in ``store``."""
    name = path.name or str(path)
    if path.is_dir():
        raise AttachmentError(f"{name} is a folder: attach the files in it instead.")
    try:
        size = path.stat().st_size
        # Unbuffered: a buffered reader kept the head's 8 KB and joined the rest to it,
        # copying a 20 MB file in one call that held the interpreter (13 ms).
        with path.open("rb", buffering=0) as handle:
            head = handle.read(16)
            kind = sniff_kind(head, path)
            if size > LIMITS[kind]:
                raise AttachmentError(
                    f"{name} is too large to attach ({size_words(size)}): Coco attaches "
                    f"{'PDFs' if kind == 'pdf' else kind + ' files'} up to "
                    f"{size_words(LIMITS[kind])}."
                )
            handle.seek(0)
            data = handle.readall()  # read with the interpreter free
    except FileNotFoundError as exc:
        raise AttachmentError(f"{name} no longer exists, so it was not attached.") from exc
    except PermissionError as exc:
        raise AttachmentError(f"{name} could not be read: permission denied.") from exc
    except OSError as exc:
        raise AttachmentError(f"{name} could not be read: {exc.strerror or exc}.") from exc
    if kind == "image":
        return image_attachment(data, name, store, path)
    part: Part = {"type": ATTACHMENT, "kind": kind, "name": name, "size": len(data)}
    if kind == "pdf":
        text, pages = _pdf_text(path, data, name)
        part.update(mime="application/pdf", pages=pages)
    else:
        text, encoding = decode_text(data, name)
        part.update(mime="text/plain", encoding=encoding)
    part.update(text=text, lines=text.count("\n") + 1 if text else 0)
    part["file"] = store.put(data, part["mime"])
    return part


def _pdf_text(path: Path, data: bytes, name: str) -> tuple[str, int]:
    """A PDF's text and pages, read in the worker process (pypdf is pure Python: seconds of
    the interpreter for a large file, see ``system.worker_process``)."""
    return _in_process(pdf_file_text, path, data, name, "PDF reader")


def _in_process(
    function: Callable[[str, int, str], T], path: Path, data: bytes, name: str, reader: str
) -> T:
    """``function`` of the file at ``path`` (whose bytes are ``data``) in the worker process,
    which reads it again there; a process that stopped is refused in words."""
    try:
        return run_in_process(function, str(path), len(data), name)
    except WorkerProcessDied as exc:
        raise AttachmentError(
            f"{name} could not be read: reading it stopped the {reader} ({exc})."
        ) from exc
