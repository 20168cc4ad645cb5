"""Turning whatever a model request raised into one classified ``ProviderError``.

Providers call :func:`classify_exception` for SDK and transport exceptions and
:func:`classify_error_payload` for errors the server reports inside a 200 stream
(``response.failed``, ``error`` events, ``{"error": {...}}`` chunks). Context overflow is checked
first in every case, because the core reacts to it differently from every other failure.
"""

from __future__ import annotations

import email.utils
import html
import http
import json
import re
import time
from collections.abc import Iterable, Mapping
from typing import Any

import httpx2
import openai
import pydantic

from ..secrets import redact_url
from .base import ErrorCategory, ProviderError

# Phrases servers use for "the input does not fit the context window" (compaction-spec.md §5).
_OVERFLOW_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"prompt is too long",  # Anthropic
        r"input is too long for requested model",  # Bedrock
        r"exceeds the context window",  # OpenAI
        r"input token count.*exceeds the maximum",  # Google
        r"maximum prompt length is \d+",  # xAI
        r"reduce the length of the messages",  # Groq, OpenAI chat
        r"maximum context length is \d+ tokens",  # OpenAI chat, vLLM, OpenRouter
        r"exceeds the limit of \d+",  # Copilot
        r"exceeds the available context size",  # llama.cpp
        r"greater than the context length",  # LM Studio
        r"n_keep.*>=.*n_ctx",  # LM Studio
        r"context the overflows",  # LM Studio (sic)
        r"the input length exceeds the context length",  # Ollama, truncate off
        r"too large for model with \d+ maximum context length",  # Mistral
        r"context length exceeded",
        r"too many tokens",
        r"token limit exceeded",
    )
)
_OVERFLOW_CODES = frozenset({"context_length_exceeded"})
_OVERFLOW_TYPES = frozenset({"exceed_context_size_error"})

# Things that look like credentials, scrubbed from every message even when they are not ours.
_KEY_LIKE = re.compile(r"\b(?:sk|rk|pk)-[A-Za-z0-9_\-*]{8,}")
_BEARER = re.compile(r"(?i)\b(bearer\s+)[^\s\"',;]+")
_REDACTED = "[redacted]"
_MAX_MESSAGE = 500

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
_TRY_AGAIN = re.compile(r"try again in\s*([\d.]+)\s*(ms|s|seconds?)\b", re.IGNORECASE)


def is_context_overflow(code: str | None, message: str, type_: str | None = None) -> bool:
    """True when an error says the input does not fit the model's context window.

    Matches OpenAI's ``context_length_exceeded`` code, llama.cpp's ``exceed_context_size_error``
    type, and the phrases other servers put in their messages. An MLX "Prefill context too large
    for available memory" is a memory error, not an overflow, and matches none of them.
    """
    if code in _OVERFLOW_CODES or type_ in _OVERFLOW_TYPES:
        return True
    return any(pattern.search(message) for pattern in _OVERFLOW_PATTERNS)


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


def scrub_secrets(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with each given secret and anything shaped like an API key replaced."""
    for secret in secrets:
        # Very short "keys" (e.g. "x" for a local server) would shred ordinary words.
        if secret and len(secret) >= 6:
            text = text.replace(secret, _REDACTED)
    text = _KEY_LIKE.sub(_REDACTED, text)
    return _BEARER.sub(lambda m: m.group(1) + _REDACTED, text)


# --- replies that are not the API: web pages, undecodable bytes -------------------------------

_HTML_START = re.compile(r"^\s*(?:<!doctype\s+html|<html|<head|<body|<title|<!--)", re.IGNORECASE)
_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_HTML_TAG = re.compile(r"<[^>]+>")
_MAX_DETAILS = 2000
# How much of a web page is read to describe it (its title, the start of its text).
WEB_PAGE_SNIFF_BYTES = 64 * 1024


def looks_like_html(text: str) -> bool:
    """True when ``text`` is a web page rather than JSON or an event stream."""
    return bool(_HTML_START.match(text[:1000]))


def _status_text(status: int) -> str:
    try:
        return f"{status} {http.HTTPStatus(status).phrase}"
    except ValueError:
        return str(status)


def _page_summary(page: str) -> str:
    """The title and the start of the visible text of a web page, for the details view."""
    match = _HTML_TITLE.search(page)
    title = " ".join(html.unescape(match.group(1)).split()) if match else ""
    text = " ".join(html.unescape(_HTML_TAG.sub(" ", _HTML_TITLE.sub(" ", page))).split())
    parts = [f"page title: {title}"] if title else []
    if text:
        parts.append(f"page text: {text[:300]}")
    return "; ".join(parts)


def _details(*parts: str, secrets: tuple[str, ...] = ()) -> str:
    text = scrub_secrets("\n".join(part for part in parts if part), secrets)
    return text if len(text) <= _MAX_DETAILS else text[: _MAX_DETAILS - 1] + "…"


def web_page_error(
    page: str, *, base_url: str, status: int | None, secrets: Iterable[str] = ()
) -> ProviderError:
    """The error for a web page where the API's JSON or event stream was expected: a proxy's
    error page (nginx "502 Bad Gateway"), a network login page, a website at the base URL.

    A server error page (5xx) is retried like any server error; anything else is not, since
    the same address gives the same page.
    """
    secrets = tuple(secrets)
    where = f" (HTTP {_status_text(status)})" if status is not None else ""
    message = f"the server answered with a web page instead of the API{where}"
    if status is not None and status >= 500:
        message += " — is the base URL right? If it is, the service behind it may be down."
        category: ErrorCategory = "server"
    elif status is None or status < 300:
        message += (
            " — is the base URL right? A network login page (hotel, train or café Wi-Fi) "
            "can also answer in its place."
        )
        category = "bad_request"
    else:
        message += " — is the base URL right?"
        category = "not_found" if status == 404 else "bad_request"
    details = _details(
        f"{base_url}: HTTP {_status_text(status)}" if status is not None else base_url,
        _page_summary(page),
        page[:_MAX_DETAILS],
        secrets=secrets,
    )
    return ProviderError(
        category, scrub_secrets(message, secrets), status=status, code="web_page", details=details
    )


async def refuse_web_page(
    response: httpx2.Response, *, base_url: str, secrets: Iterable[str] = ()
) -> None:
    """Raise :func:`web_page_error` when a streaming response is a web page (``text/html``),
    reading at most :data:`WEB_PAGE_SNIFF_BYTES` of it to describe it; else do nothing."""
    content_type = response.headers.get("content-type", "").lower()
    if "text/html" not in content_type:
        return
    body = b""
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) >= WEB_PAGE_SNIFF_BYTES:
            break
    page = body[:WEB_PAGE_SNIFF_BYTES].decode(response.encoding or "utf-8", errors="replace")
    raise web_page_error(page, base_url=base_url, status=response.status_code, secrets=secrets)


def _unreadable_reply(
    exc: json.JSONDecodeError | UnicodeDecodeError, base_url: str, secrets: tuple[str, ...]
) -> ProviderError:
    """A reply that could not be parsed, in words; the parser's message goes to details."""
    if isinstance(exc, json.JSONDecodeError) and looks_like_html(exc.doc):
        return web_page_error(exc.doc, base_url=base_url, status=None, secrets=secrets)
    technical = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if isinstance(exc, UnicodeDecodeError):
        message = (
            "the server sent bytes that are not text (invalid UTF-8) where the API's JSON "
            "was expected — is the base URL an OpenAI-compatible API?"
        )
        detail = f"{technical}; bytes near the error: {exc.object[exc.start : exc.start + 16]!r}"
    else:
        message = "the server sent a reply that is not valid JSON, so it could not be read"
        detail = f"{technical}; reply starts: {exc.doc[:200]!r}"
    return ProviderError(
        "malformed", message, code="unreadable", details=_details(base_url, detail, secrets=secrets)
    )


def auth_message(base_url: str) -> str:
    """The one message shown for a rejected key (it never includes the key)."""
    return f"the server rejected the API key for {base_url}"


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


def _retry_after_from_message(message: str) -> float | None:
    """OpenAI's in-band rate-limit errors say "Please try again in 1.5s" instead of a header."""
    match = _TRY_AGAIN.search(message)
    if not match:
        return None
    try:
        amount = float(match.group(1))
    except ValueError:
        return None
    return amount / 1000.0 if match.group(2).lower() == "ms" else amount


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 1] + "…"


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
    message = _clip(scrub_secrets(message, secrets))
    if is_context_overflow(code, message, type_):
        return ProviderError("context_overflow", message, status=status, code=code)
    if is_model_output_error(message):
        return model_output_error(message, status=status, code=code)
    category = _CODE_CATEGORIES.get(code or "", default)
    if category == "auth":
        return ProviderError("auth", auth_message(base_url), status=status, code=code)
    retry_after = _retry_after_from_message(message) if category == "rate_limit" else None
    return ProviderError(category, message, status=status, retry_after=retry_after, code=code)


def _reason(exc: BaseException) -> str:
    """A short human reason for a transport failure (the innermost useful message)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    best = ""
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        text = str(current).strip()
        if text and text not in ("Connection error.", "Request timed out."):
            best = text
        current = current.__cause__ or current.__context__
    if not best:
        best = "timed out" if isinstance(exc, openai.APITimeoutError) else type(exc).__name__
    return best


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
    message = _clip(scrub_secrets(raw_message, secrets))
    if is_context_overflow(code, message, type_):
        return ProviderError("context_overflow", message, status=status, code=code)
    if status >= 500 and is_model_output_error(message):
        return model_output_error(message, status=status, code=code)
    if status in (401, 403):
        return ProviderError("auth", auth_message(base_url), status=status, code=code)
    if status == 429:
        retry_after = parse_retry_after(exc.response.headers)
        if retry_after is None:
            retry_after = _retry_after_from_message(message)
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
        error.details = _details(f"HTTP {_status_text(exc.status_code)}", body, secrets=secrets)
    elif error.details is None:
        raw = str(exc).strip() or type(exc).__name__
        error.details = _details(f"{type(exc).__name__}: {raw}", secrets=secrets)
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
        return _timed_out(base_url)
    if isinstance(exc, openai.APIConnectionError):
        # The SDK wraps transport errors raised while reading a stream the same way as
        # failed connects; a protocol/read error underneath means the body was cut.
        cause = exc.__cause__
        if isinstance(cause, (httpx2.RemoteProtocolError, httpx2.ReadError)):
            return _stream_cut(cause, secrets)
        return _unreachable(exc, base_url, secrets)
    if isinstance(exc, openai.APIError):
        # An in-band SSE error (``{"error": {...}}`` chunk) the SDK raised without a status.
        body: object = exc.body if exc.body is not None else exc.message
        if isinstance(body, Mapping) and not body.get("message"):
            body = {**body, "message": exc.message}
        if is_context_overflow(exc.code, exc.message, exc.type):
            message = _clip(scrub_secrets(exc.message, secrets))
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
        return _timed_out(base_url)
    if isinstance(exc, (httpx2.RemoteProtocolError, httpx2.ReadError)):
        return _stream_cut(exc, secrets)
    if isinstance(exc, (httpx2.ConnectError, httpx2.TransportError, OSError)):
        return _unreachable(exc, base_url, secrets)
    if isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError)):
        return _unreadable_reply(exc, base_url, secrets)
    if isinstance(exc, pydantic.ValidationError):
        detail = scrub_secrets(
            str(exc).splitlines()[0] if str(exc) else type(exc).__name__, secrets
        )
        return ProviderError("malformed", f"unparsable response from {base_url}: {_clip(detail)}")
    if isinstance(exc, httpx2.HTTPError):
        return _unreachable(exc, base_url, secrets)
    detail = scrub_secrets(str(exc) or type(exc).__name__, secrets)
    return ProviderError("bad_request", f"request to {base_url} failed: {_clip(detail)}")


def _timed_out(base_url: str) -> ProviderError:
    why, advice = _TIMED_OUT
    return ProviderError("connection", _unreachable_text(base_url, why, advice), code="timeout")


# --- a server that cannot be reached, in words -----------------------------------------------

_CHECK_SERVER = "Check that the server is running and that the address in Settings is right."
_TIMED_OUT = (
    "it did not answer in time (timed out)",
    (
        "Check that the server is running and reachable; a slow server may need a longer "
        "request timeout in Settings."
    ),
)
# What the transport error underneath means (matched on the chain of exceptions' names and
# messages, which differ by platform: errno numbers are Linux, macOS and Windows ones).
_UNREACHABLE_REASONS: tuple[tuple[re.Pattern[str], str, str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), why, advice)
    for pattern, why, advice in (
        (
            r"connection ?refused|connect call failed|errno (?:111|61)\b|winerror 10061",
            "nothing is listening there (connection refused)",
            _CHECK_SERVER,
        ),
        (
            (
                r"gaierror|name or service not known|nodename nor servname|name resolution|"
                r"getaddrinfo failed|no address associated"
            ),
            "its host name could not be found",
            "Check the address in Settings and your internet connection.",
        ),
        (
            r"network is unreachable|errno (?:101|51)\b",
            "the network is unreachable",
            "Check your internet connection.",
        ),
        (
            r"no route to host|host is unreachable|errno (?:113|65)\b",
            "there is no route to that host",
            "Check the address in Settings and your network.",
        ),
        (
            r"connection ?reset|errno (?:104|54)\b",
            "the connection was reset",
            "The server may be restarting; try again in a moment.",
        ),
        (
            r"certificate.verify.failed|self[- ]signed certificate",
            "its security certificate is not trusted",
            "Check the address in Settings (http:// or https://) and the server's certificate.",
        ),
        (
            r"wrong.version.number|\bssl|\btls",
            "the secure connection (TLS) could not be set up",
            "Check whether the server expects http:// or https:// in the address in Settings.",
        ),
        (r"timed? ?out|timeout", *_TIMED_OUT),
    )
)


def _unreachable_text(base_url: str, why: str, advice: str) -> str:
    return f"Coco could not reach the server at {base_url}: {why}. {advice}"


def _exception_chain(exc: BaseException) -> list[str]:
    """``Type: message`` for ``exc`` and each exception behind it, outermost first."""
    seen: set[int] = set()
    parts: list[str] = []
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        text = str(current).strip()
        if text not in ("Connection error.", "Request timed out."):  # the SDK's wrappers
            parts.append(f"{type(current).__name__}: {text}" if text else type(current).__name__)
        current = current.__cause__ or current.__context__
    return parts or [type(exc).__name__]


def _unreachable(exc: BaseException, base_url: str, secrets: tuple[str, ...]) -> ProviderError:
    """The server could not be reached: why, in words, and what to check; the raw errors
    (errno text and all) go to ``details``."""
    chain = _exception_chain(exc)
    raw = " ← ".join(chain)
    details = _details(base_url, *chain, secrets=secrets)
    for pattern, why, advice in _UNREACHABLE_REASONS:
        if pattern.search(raw):
            timeout = "timeout" if advice == _TIMED_OUT[1] else None
            return ProviderError(
                "connection", _unreachable_text(base_url, why, advice), code=timeout,
                details=details,
            )
    reason = _clip(scrub_secrets(_reason(exc), secrets)).rstrip(". ")
    return ProviderError(
        "connection", _unreachable_text(base_url, reason, _CHECK_SERVER), details=details
    )


def _stream_cut(exc: BaseException, secrets: tuple[str, ...]) -> ProviderError:
    reason = _clip(scrub_secrets(_reason(exc), secrets))
    return ProviderError("stream", f"the response stream was cut: {reason}")
