"""How a failed model request is reported to the user: its error kind and technical detail."""

from __future__ import annotations

from ... import protocol as p
from ...providers.base import ProviderError


def error_details(error: ProviderError) -> str:
    """The technical detail of a failed request: the provider's own, else what is known of
    it (category, status, code, message)."""
    if error.details:
        return error.details
    facts = [f"category: {error.category}"]
    if error.status:
        facts.append(f"HTTP status: {error.status}")
    if error.code:
        facts.append(f"code: {error.code}")
    facts.append(f"message: {error.message}")
    return "\n".join(facts)


def error_kind(error: ProviderError) -> p.ErrorKind:
    mapping: dict[str, p.ErrorKind] = {
        "auth": "auth",
        "rate_limit": "rate_limit",
        "server": "server",
        "connection": "connection",
        "stream": "stream",
        "context_overflow": "context_overflow",
        "bad_request": "bad_request",
        "not_found": "not_found",
        "malformed": "malformed",
        "model_output": "bad_request",  # the same request gets the same malformed output
    }
    return mapping.get(error.category, "internal")
