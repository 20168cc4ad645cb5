"""Images as a provider takes them: decoded with Pillow, scaled to OpenAI's high-detail size
(within 2048 x 2048, shortest side at most 768), and their cost by OpenAI's published rule
(85 tokens, plus 170 per 512-pixel tile of the scaled image)."""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, replace

from .errors import AttachmentError
from .reread import read_again

BASE_TOKENS = 85
TILE_TOKENS = 170
TILE = 512
FIT = 2048
SHORT_SIDE = 768
# What an image may hold once decoded (a 16K x 16K image); past it, a decompression bomb.
MAX_PIXELS = 16384 * 16384
FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp", "GIF": "image/gif"}


def scaled_size(width: int, height: int) -> tuple[int, int]:
    """The size OpenAI scales an image to for high detail: within 2048 x 2048, then the
    shortest side at most 768 (never enlarged)."""
    w, h = float(width), float(height)
    if max(w, h) > FIT:
        ratio = FIT / max(w, h)
        w, h = w * ratio, h * ratio
    if min(w, h) > SHORT_SIDE:
        ratio = SHORT_SIDE / min(w, h)
        w, h = w * ratio, h * ratio
    return max(1, round(w)), max(1, round(h))


def image_tokens(width: int, height: int) -> int:
    """Tokens an image costs a model (OpenAI's rule for high detail, on the scaled size)."""
    w, h = scaled_size(width, height)
    return BASE_TOKENS + TILE_TOKENS * math.ceil(w / TILE) * math.ceil(h / TILE)


@dataclass(frozen=True)
class PreparedImage:
    """An image read and made ready: what is sent (scaled), and what the original was."""

    format: str  # PNG, JPEG, WEBP, GIF (the original's)
    width: int  # the original's size
    height: int
    sent: bytes  # the bytes sent (the original when it needed no scaling)
    sent_mime: str
    sent_width: int
    sent_height: int

    @property
    def tokens(self) -> int:
        return image_tokens(self.width, self.height)


def prepare_image(data: bytes, name: str) -> PreparedImage:
    """Decode ``data`` and scale it for sending; :class:`AttachmentError` in words when it is
    not an image Coco can send (corrupt, another format, too many pixels)."""
    from PIL import Image, UnidentifiedImageError  # here: the window never decodes through this

    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    try:
        with Image.open(io.BytesIO(data)) as image:
            fmt = str(image.format or "")
            if fmt not in FORMATS:
                raise AttachmentError(
                    f"{name} is a {fmt or 'kind of'} image Coco cannot send: attach a PNG, "
                    "JPEG, WebP or GIF image."
                )
            width, height = image.size
            image.load()  # a truncated or corrupt file fails here, not on the server
            target = scaled_size(width, height)
            animated = bool(getattr(image, "is_animated", False))
            if target == (width, height) and not animated:
                return PreparedImage(fmt, width, height, data, FORMATS[fmt], width, height)
            frame = image.convert("RGBA" if _has_alpha(image) else "RGB")
            frame = frame.resize(target, Image.Resampling.LANCZOS)
            out = io.BytesIO()
            if fmt == "JPEG":
                frame.save(out, "JPEG", quality=90)
                mime = "image/jpeg"
            else:
                frame.save(out, "PNG", optimize=False, compress_level=3)
                mime = "image/png"
            return PreparedImage(fmt, width, height, out.getvalue(), mime, *target)
    except AttachmentError:
        raise
    except Image.DecompressionBombError as exc:
        raise AttachmentError(
            f"{name} is too large an image to send (more than {MAX_PIXELS:,} pixels)."
        ) from exc
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise AttachmentError(
            f"{name} could not be read as an image: the file is damaged or not an image."
        ) from exc


def _has_alpha(image: object) -> bool:
    mode = str(getattr(image, "mode", ""))
    info = getattr(image, "info", {})
    return mode in ("RGBA", "LA", "PA") or (mode == "P" and "transparency" in info)


def prepare_image_file(path: str, size: int, name: str) -> PreparedImage:
    """:func:`prepare_image` of the image at ``path``, read again where it runs (the worker
    process: decoding and scaling a 4K screenshot held the window's interpreter for 30-90 ms).
    An image sent as it is comes back without its bytes (``sent`` empty): the caller has
    them."""
    data = read_again(path, size, name)
    image = prepare_image(data, name)
    return replace(image, sent=b"") if image.sent is data else image
