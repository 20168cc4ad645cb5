"""The provider error table: whatever a model request raised, as one classified ``ProviderError``.

Providers call :func:`classify_exception` for SDK and transport exceptions and
:func:`classify_error_payload` for errors the server reports inside a 200 stream
(``response.failed``, ``error`` events, ``{"error": {...}}`` chunks). Context overflow is checked
first in every case, because the core reacts to it differently from every other failure. The
words for each kind live beside it: :mod:`.overflow`, :mod:`.non_api_replies`,
:mod:`.transport_errors`, :mod:`.retry_after`, :mod:`.error_text`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import httpx2
import openai
import pydantic

from ...system.secrets import redact_url
from ..base import ErrorCategory, ProviderError
from .non_api_replies import (
    WEB_PAGE_SNIFF_BYTES,
    looks_like_html,
    refuse_web_page,
    unreadable_reply_error,
    web_page_error,
)
from .overflow import is_context_overflow
from .retry_after import parse_retry_after, retry_after_from_message
from .transport import stream_cut_error, timed_out_error, unreachable_error
from .wording import clip, details_text, scrub_secrets, status_text

# Also importable from here, where they were before the words for each kind moved out.
__all__ = [
    "WEB_PAGE_SNIFF_BYTES",
    "auth_message",
    "classify_error_payload",
    "classify_exception",
    "is_context_overflow",
    "is_model_output_error",
    "looks_like_html",
    "model_output_error",
    "parse_retry_after",
    "refuse_web_page",
    "scrub_secrets",
    "web_page_error",
]

# In-band error codes (``response.failed`` / ``error`` events) and what they mean to the core.
_CODE_CATEGORIES: dict[str, ErrorCategory] = {
    "rate_limit_exceeded": "rate_limit",
    "insufficient_quota": "bad_request",  # retrying an empty balance never helps
    "invalid_prompt": "bad_request",
    "invalid_request_error": "bad_request",
    "invalid_api_key": "auth",
    "model_not_found": "not_found",
    "server_error": "server",
    "server_is_overloaded": "server",
    "slow_down": "server",
}
# llama.cpp answers 500 when it cannot parse the model's own output (a tool call in the wrong
# shape, arguments that are not JSON). That is the model's doing, not a server fault.
_MODEL_OUTPUT_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"the model produced output that does not match the expected",
        r"failed to parse tool call",
    )
)


def is_model_output_error(message: str) -> bool:
    """True when the server says it could not parse the model's output (llama.cpp)."""
    return any(pattern.search(message) for pattern in _MODEL_OUTPUT_PATTERNS)


def model_output_error(
    message: str, *, status: int | None = None, code: str | None = None
) -> ProviderError:
    """The error for a reply the server could not parse: said in words, never retried."""
    return ProviderError(
        "model_output",
        "the model produced a malformed tool call (or a reply the server could not read), and "
        "sending the same request again would give the same result. Rephrase the request, or "
        f"use a model whose chat template supports tools. The server said: {message}",
        status=status,
        code=code,
    )


def auth_message(base_url: str) -> str:
    """The one message shown for a rejected key (it never includes the key)."""
    return f"the server rejected the API key for {base_url}"


def _error_fields(body: object, fallback: str) -> tuple[str, str | None, str | None]:
    """(message, code, type) from an error body: a dict, ``{"error": ...}``, or plain text."""
    if isinstance(body, Mapping) and "error" in body and not body.get("message"):
        body = body["error"]
    if isinstance(body, Mapping):
        message = body.get("message") or body.get("error") or fallback
        code = body.get("code")
        type_ = body.get("type")
        return (
            str(message),
            None if code is None else str(code),
            None if type_ is None else str(type_),
        )
    if isinstance(body, str) and body.strip():
        return body, None, None
    return fallback, None, None


def classify_error_payload(
    payload: Mapping[str, Any] | str | None,
    *,
    base_url: str,
    secrets: Iterable[str] = (),
    status: int | None = None,
    default: ErrorCategory = "server",
) -> ProviderError:
    """Classify an error the server reported in-band (inside a 200 stream).

    ``payload`` is the error object (``{"code", "message", "type"}``), a wrapper holding one
    under ``"error"``, or plain text. Unknown codes fall back to ``default``: a server-side
    failure is worth a retry unless the code says otherwise.
    """
    secrets = tuple(secrets)
    base_url = redact_url(base_url, secrets)
    message, code, type_ = _error_fields(payload, "the server reported an error")
    message = clip(scrub_secrets(message, secrets))
    if is_context_overflow(code, message, type_):
        return ProviderError("context_overflow", message, status=status, code=code)
    if is_model_output_error(message):
        return model_output_error(message, status=status, code=code)
    category = _CODE_CATEGORIES.get(code or "", default)
    if category == "auth":
        return ProviderError("auth", auth_message(base_url), status=status, code=code)
    retry_after = retry_after_from_message(message) if category == "rate_limit" else None
    return ProviderError(category, message, status=status, retry_after=retry_after, code=code)


def _classify_status(
    exc: openai.APIStatusError, base_url: str, secrets: tuple[str, ...]
) -> ProviderError:
    status = exc.status_code
    if isinstance(exc.body, str) and looks_like_html(exc.body) and status not in (401, 403):
        # (A login wall's 401/403 page still means the key was refused: classified below.)
        return web_page_error(exc.body, base_url=base_url, status=status, secrets=secrets)
    raw_message, code, type_ = _error_fields(exc.body, exc.message)
    code = code or exc.code
    type_ = type_ or exc.type
    message = clip(scrub_secrets(raw_message, secrets))
    if is_context_overflow(code, message, type_):
        return ProviderError("context_overflow", message, status=status, code=code)
    if status >= 500 and is_model_output_error(message):
        return model_output_error(message, status=status, code=code)
    if status in (401, 403):
        return ProviderError("auth", auth_message(base_url), status=status, code=code)
    if status == 429:
        retry_after = parse_retry_after(exc.response.headers)
        if retry_after is None:
            retry_after = retry_after_from_message(message)
        return ProviderError(
            "rate_limit",
            f"rate limited by {base_url}: {message}",
            status=status,
            retry_after=retry_after,
            code=code,
        )
    if status == 404:
        return ProviderError(
            "not_found", f"not found on {base_url}: {message}", status=status, code=code
        )
    if status >= 500:
        return ProviderError(
            "server", f"server error {status}: {message}", status=status, code=code
        )
    return ProviderError("bad_request", message, status=status, code=code)


def classify_exception(
    exc: BaseException, base_url: str, *, secrets: Iterable[str] = ()
) -> ProviderError:
    """Map an exception raised by a model request to a ``ProviderError`` (see
    :func:`_classify`). The message and details never contain ``secrets``, even where the
    base URL itself holds the key; ``details`` keeps the technical cause."""
    secrets = tuple(secrets)
    if isinstance(exc, ProviderError):
        return exc
    error = _classify(exc, redact_url(base_url, secrets), secrets)
    if error.details is None and isinstance(exc, openai.APIStatusError):
        body = exc.body if isinstance(exc.body, str) else json.dumps(exc.body, default=str)
        error.details = details_text(f"HTTP {status_text(exc.status_code)}", body, secrets=secrets)
    elif error.details is None:
        raw = str(exc).strip() or type(exc).__name__
        error.details = details_text(f"{type(exc).__name__}: {raw}", secrets=secrets)
    return _scrubbed(error, secrets)


def _scrubbed(error: ProviderError, secrets: tuple[str, ...]) -> ProviderError:
    """``error`` with the secrets taken out of its message (the base URL may hold the key)."""
    message = scrub_secrets(error.message, secrets)
    if message != error.message:
        error.message = message
        error.args = (message,)
    if error.details is not None:
        error.details = scrub_secrets(error.details, secrets)
    return error


def _classify(exc: BaseException, base_url: str, secrets: tuple[str, ...]) -> ProviderError:
    """Map an exception raised by a model request to a ``ProviderError``.

    Status errors map by code (overflow first, whatever the status); in-band ``APIError``\\ s
    without a status by their payload; transport failures to ``connection`` (before any
    response) or ``stream`` (the body was cut); undecodable payloads to ``malformed``. No
    message ever contains ``secrets`` or anything shaped like an API key.
    """
    if isinstance(exc, openai.APIStatusError):
        return _classify_status(exc, base_url, secrets)
    if isinstance(exc, openai.APIResponseValidationError):
        return ProviderError("malformed", f"unexpected response from {base_url}: {exc.message}")
    if isinstance(exc, openai.APITimeoutError):
        return timed_out_error(base_url)
    if isinstance(exc, openai.APIConnectionError):
        # The SDK wraps transport errors raised while reading a stream the same way as
        # failed connects; a protocol/read error underneath means the body was cut.
        cause = exc.__cause__
        if isinstance(cause, (httpx2.RemoteProtocolError, httpx2.ReadError)):
            return stream_cut_error(cause, secrets)
        return unreachable_error(exc, base_url, secrets)
    if isinstance(exc, openai.APIError):
        # An in-band SSE error (``{"error": {...}}`` chunk) the SDK raised without a status.
        body: object = exc.body if exc.body is not None else exc.message
        if isinstance(body, Mapping) and not body.get("message"):
            body = {**body, "message": exc.message}
        if is_context_overflow(exc.code, exc.message, exc.type):
            message = clip(scrub_secrets(exc.message, secrets))
            return ProviderError("context_overflow", message, code=exc.code)
        return classify_error_payload(
            body if isinstance(body, (Mapping, str)) else exc.message,
            base_url=base_url,
            secrets=secrets,
        )
    if isinstance(exc, httpx2.ReadTimeout):
        return ProviderError(
            "connection",
            "the server stopped sending: nothing arrived for the whole request timeout",
            code="timeout",
        )
    if isinstance(exc, httpx2.TimeoutException):
        return timed_out_error(base_url)
    if isinstance(exc, (httpx2.RemoteProtocolError, httpx2.ReadError)):
        return stream_cut_error(exc, secrets)
    if isinstance(exc, (httpx2.ConnectError, httpx2.TransportError, OSError)):
        return unreachable_error(exc, base_url, secrets)
    if isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError)):
        return unreadable_reply_error(exc, base_url, secrets)
    if isinstance(exc, pydantic.ValidationError):
        detail = scrub_secrets(
            str(exc).splitlines()[0] if str(exc) else type(exc).__name__, secrets
        )
        return ProviderError("malformed", f"unparsable response from {base_url}: {clip(detail)}")
    if isinstance(exc, httpx2.HTTPError):
        return unreachable_error(exc, base_url, secrets)
    detail = scrub_secrets(str(exc) or type(exc).__name__, secrets)
    return ProviderError("bad_request", f"request to {base_url} failed: {clip(detail)}")

