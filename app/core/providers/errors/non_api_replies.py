"""Replies that are not the API's: a web page where JSON or an event stream was expected (a
proxy's error page, a Wi-Fi login page, a website), bytes that are not text, JSON that does not
parse. Each is said in words; what was received goes to the error's details."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable

import httpx2

from ..base import ErrorCategory, ProviderError
from .wording import MAX_DETAILS, details_text, scrub_secrets, status_text

_HTML_START = re.compile(r"^\s*(?:<!doctype\s+html|<html|<head|<body|<title|<!--)", re.IGNORECASE)
_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_HTML_TAG = re.compile(r"<[^>]+>")
# How much of a web page is read to describe it (its title, the start of its text).
WEB_PAGE_SNIFF_BYTES = 64 * 1024


def looks_like_html(text: str) -> bool:
    """True when ``text`` is a web page rather than JSON or an event stream."""
    return bool(_HTML_START.match(text[:1000]))


def _page_summary(page: str) -> str:
    """The title and the start of the visible text of a web page, for the details view."""
    match = _HTML_TITLE.search(page)
    title = " ".join(html.unescape(match.group(1)).split()) if match else ""
    text = " ".join(html.unescape(_HTML_TAG.sub(" ", _HTML_TITLE.sub(" ", page))).split())
    parts = [f"page title: {title}"] if title else []
    if text:
        parts.append(f"page text: {text[:300]}")
    return "; ".join(parts)


def web_page_error(
    page: str, *, base_url: str, status: int | None, secrets: Iterable[str] = ()
) -> ProviderError:
    """The error for a web page where the API's JSON or event stream was expected: a proxy's
    error page (nginx "502 Bad Gateway"), a network login page, a website at the base URL.

    A server error page (5xx) is retried like any server error; anything else is not, since
    the same address gives the same page.
    """
    secrets = tuple(secrets)
    where = f" (HTTP {status_text(status)})" if status is not None else ""
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
    details = details_text(
        f"{base_url}: HTTP {status_text(status)}" if status is not None else base_url,
        _page_summary(page),
        page[:MAX_DETAILS],
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


def unreadable_reply_error(
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
        "malformed",
        message,
        code="unreadable",
        details=details_text(base_url, detail, secrets=secrets),
    )
