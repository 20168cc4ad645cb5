"""How long a server asks Coco to wait before trying again: the ``retry-after-ms`` and
``Retry-After`` headers, or the "try again in 1.5s" of an in-band rate-limit message."""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Mapping

_TRY_AGAIN = re.compile(r"try again in\s*([\d.]+)\s*(ms|s|seconds?)\b", re.IGNORECASE)


def parse_retry_after(
    headers: Mapping[str, str] | None, *, now: float | None = None
) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if not headers:
        return None
    lowered = {key.lower(): value for key, value in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def retry_after_from_message(message: str) -> float | None:
    """OpenAI's in-band rate-limit errors say "Please try again in 1.5s" instead of a header."""
    match = _TRY_AGAIN.search(message)
    if not match:
        return None
    try:
        amount = float(match.group(1))
    except ValueError:
        return None
    return amount / 1000.0 if match.group(2).lower() == "ms" else amount
