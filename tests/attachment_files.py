"""Files to attach in tests: images made with Pillow, PDFs with text made with pypdf."""

from __future__ import annotations

import io
from pathlib import Path


def png_bytes(width: int, height: int, color: tuple[int, int, int] = (200, 40, 40)) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (width, height), color).save(out, "PNG")
    return out.getvalue()


def write_png(path: Path, width: int, height: int) -> Path:
    path.write_bytes(png_bytes(width, height))
    return path


def write_image(path: Path, width: int, height: int, fmt: str) -> Path:
    from PIL import Image

    Image.new("RGB", (width, height), (10, 120, 200)).save(path, fmt)
    return path


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf_bytes(pages: list[list[str]], password: str | None = None) -> bytes:
    """A PDF whose pages hold ``pages``' lines as real text (Helvetica)."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    font = writer._add_object(
        DictionaryObject({
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        })
    )
    for lines in pages:
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
        ops = ["BT", "/F1 11 Tf", "14 TL", "50 750 Td"]
        ops += [f"({_escape(line)}) Tj T*" for line in lines]
        ops.append("ET")
        stream = DecodedStreamObject()
        stream.set_data("\n".join(ops).encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
    if password is not None:
        writer.encrypt(password, algorithm="AES-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
