"""Transport failures in words: a server that cannot be reached (refused, unknown host, no
route, TLS, timed out), said with what to check, and a reply stream cut part-way."""

from __future__ import annotations

import re

import openai

from ..base import ProviderError
from .wording import clip, details_text, scrub_secrets

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
# The SDK's wrappers, which say nothing the exception behind them does not.
_SDK_WRAPPERS = ("Connection error.", "Request timed out.")


def _unreachable_text(base_url: str, why: str, advice: str) -> str:
    return f"Coco could not reach the server at {base_url}: {why}. {advice}"


def _reason(exc: BaseException) -> str:
    """A short human reason for a transport failure (the innermost useful message)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    best = ""
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        text = str(current).strip()
        if text and text not in _SDK_WRAPPERS:
            best = text
        current = current.__cause__ or current.__context__
    if not best:
        best = "timed out" if isinstance(exc, openai.APITimeoutError) else type(exc).__name__
    return best


def _exception_chain(exc: BaseException) -> list[str]:
    """``Type: message`` for ``exc`` and each exception behind it, outermost first."""
    seen: set[int] = set()
    parts: list[str] = []
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        text = str(current).strip()
        if text not in _SDK_WRAPPERS:
            parts.append(f"{type(current).__name__}: {text}" if text else type(current).__name__)
        current = current.__cause__ or current.__context__
    return parts or [type(exc).__name__]


def timed_out_error(base_url: str) -> ProviderError:
    """The request got no answer within its timeout (code ``timeout``)."""
    why, advice = _TIMED_OUT
    return ProviderError("connection", _unreachable_text(base_url, why, advice), code="timeout")


def unreachable_error(
    exc: BaseException, base_url: str, secrets: tuple[str, ...]
) -> ProviderError:
    """The server could not be reached: why, in words, and what to check; the raw errors
    (errno text and all) go to ``details``."""
    chain = _exception_chain(exc)
    raw = " ← ".join(chain)
    details = details_text(base_url, *chain, secrets=secrets)
    for pattern, why, advice in _UNREACHABLE_REASONS:
        if pattern.search(raw):
            timeout = "timeout" if advice == _TIMED_OUT[1] else None
            return ProviderError(
                "connection", _unreachable_text(base_url, why, advice), code=timeout,
                details=details,
            )
    reason = clip(scrub_secrets(_reason(exc), secrets)).rstrip(". ")
    return ProviderError(
        "connection", _unreachable_text(base_url, reason, _CHECK_SERVER), details=details
    )


def stream_cut_error(exc: BaseException, secrets: tuple[str, ...]) -> ProviderError:
    """The reply stream broke off after it had started (category ``stream``, retried)."""
    reason = clip(scrub_secrets(_reason(exc), secrets))
    return ProviderError("stream", f"the response stream was cut: {reason}")
