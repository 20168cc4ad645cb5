"""The words of a provider error: secrets scrubbed out, a message clipped to one short line,
technical details bounded, an HTTP status said with its phrase."""

from __future__ import annotations

import http
import re
from collections.abc import Iterable

# Things that look like credentials, scrubbed from every message even when they are not ours.
_KEY_LIKE = re.compile(r"\b(?:sk|rk|pk)-[A-Za-z0-9_\-*]{8,}")
_BEARER = re.compile(r"(?i)\b(bearer\s+)[^\s\"',;]+")
_REDACTED = "[redacted]"
MAX_MESSAGE = 500
MAX_DETAILS = 2000


def scrub_secrets(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with each given secret and anything shaped like an API key replaced."""
    for secret in secrets:
        # Very short "keys" (e.g. "x" for a local server) would shred ordinary words.
        if secret and len(secret) >= 6:
            text = text.replace(secret, _REDACTED)
    text = _KEY_LIKE.sub(_REDACTED, text)
    return _BEARER.sub(lambda m: m.group(1) + _REDACTED, text)


def clip(text: str) -> str:
    """``text`` on one line (whitespace runs collapsed), at most :data:`MAX_MESSAGE` characters."""
    text = " ".join(text.split())
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


def details_text(*parts: str, secrets: tuple[str, ...] = ()) -> str:
    """The non-empty ``parts`` one per line, scrubbed, at most :data:`MAX_DETAILS` characters."""
    text = scrub_secrets("\n".join(part for part in parts if part), secrets)
    return text if len(text) <= MAX_DETAILS else text[: MAX_DETAILS - 1] + "…"


def status_text(status: int) -> str:
    """``"502 Bad Gateway"`` for 502; the bare number for a status HTTP does not name."""
    try:
        return f"{status} {http.HTTPStatus(status).phrase}"
    except ValueError:
        return str(status)
