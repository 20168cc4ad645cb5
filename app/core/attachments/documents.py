"""The text of a file attachment: a text file in any UTF-8 or detectable encoding (a binary
file refused, whatever its name), a PDF's text page by page (pypdf; an encrypted or damaged
PDF refused in words)."""

from __future__ import annotations

import codecs
import io

from .errors import AttachmentError
from .reread import read_again

# A few kilobytes tell a binary file from text: any NUL byte outside UTF-16 text.
_SNIFF = 8192
_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def decode_text(data: bytes, name: str) -> tuple[str, str]:
    """The text of a text file and its encoding; :class:`AttachmentError` for a binary file."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return _normalised(data.decode(encoding)), encoding.removesuffix("-sig")
            except UnicodeDecodeError:
                break
    if b"\x00" in data[:_SNIFF]:
        raise _binary(name)
    try:
        return _normalised(data.decode("utf-8")), "utf-8"
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes  # a maintained detector (requests uses it)

    best = from_bytes(data).best()
    if best is None:
        raise _binary(name)
    return _normalised(str(best)), str(best.encoding)


def _normalised(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _binary(name: str) -> AttachmentError:
    return AttachmentError(
        f"{name} is not a text file (it holds binary data), so Coco cannot send it. Attach "
        "text files, PDFs or images."
    )


def pdf_file_text(path: str, size: int, name: str) -> tuple[str, int]:
    """The text of the PDF at ``path`` (see :func:`pdf_text`), read again where it runs
    (``read_again``: ``size`` is its size when it was first read)."""
    return pdf_text(read_again(path, size, name), name)


def pdf_text(data: bytes, name: str) -> tuple[str, int]:
    """A PDF's text, page by page (each page headed by its number), and its page count."""
    from pypdf import PdfReader
    from pypdf.errors import FileNotDecryptedError, PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            try:  # an owner password only (no password to open): readable as it is
                if not reader.decrypt(""):
                    raise _encrypted(name)
            except (FileNotDecryptedError, NotImplementedError) as exc:
                raise _encrypted(name) from exc
        pages: list[str] = []
        for number, page in enumerate(reader.pages, start=1):
            text = (page.extract_text() or "").strip()
            pages.append(f"--- Page {number} ---\n{text}" if text else f"--- Page {number} ---")
    except AttachmentError:
        raise
    except FileNotDecryptedError as exc:
        raise _encrypted(name) from exc
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
        raise AttachmentError(
            f"{name} could not be read as a PDF: the file is damaged or not a PDF."
        ) from exc
    if not pages:
        raise AttachmentError(f"{name} is a PDF with no pages.")
    if not any("\n" in page for page in pages):
        raise AttachmentError(
            f"{name} has no text to read (a scanned PDF?): attach its pages as images instead."
        )
    return "\n\n".join(pages), len(pages)


def _encrypted(name: str) -> AttachmentError:
    return AttachmentError(
        f"{name} is a password-protected PDF, so Coco cannot read its text. Save a copy "
        "without the password and attach that."
    )
