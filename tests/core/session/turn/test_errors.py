"""How a failed request is reported: the error's kind on the protocol and its detail."""

from __future__ import annotations

from typing import get_args

import pytest

from app.core.providers.base import ErrorCategory, ProviderError
from app.core.session.turn.errors import error_details, error_kind

# Every category the providers classify, and the kind the user's error event carries.
KINDS = {
    "auth": "auth",
    "rate_limit": "rate_limit",
    "server": "server",
    "connection": "connection",
    "stream": "stream",
    "context_overflow": "context_overflow",
    "bad_request": "bad_request",
    "not_found": "not_found",
    "malformed": "malformed",
    # The server could not parse the model's output: the same request gets the same output,
    # so it is told as a bad request (not retried), not as a malformed reply (retried).
    "model_output": "bad_request",
}


def test_the_table_names_every_category() -> None:
    assert set(KINDS) == set(get_args(ErrorCategory))


@pytest.mark.parametrize(("category", "kind"), sorted(KINDS.items()))
def test_each_category_has_its_kind(category: ErrorCategory, kind: str) -> None:
    assert error_kind(ProviderError(category, "it failed")) == kind


def test_a_category_the_table_does_not_know_is_an_internal_error() -> None:
    odd = ProviderError("server", "it failed")
    odd.category = "something new"  # type: ignore[assignment]
    assert error_kind(odd) == "internal"


def test_the_providers_own_detail_is_shown_as_it_is() -> None:
    error = ProviderError("server", "The server failed.", status=502, code="x",
                          details="HTTP/1.1 502 Bad Gateway\n<html>…")
    assert error_details(error) == "HTTP/1.1 502 Bad Gateway\n<html>…"


def test_without_one_the_detail_lists_what_is_known_line_by_line() -> None:
    full = ProviderError("rate_limit", "Too many requests.", status=429, code="rate_limited")
    assert error_details(full) == (
        "category: rate_limit\nHTTP status: 429\ncode: rate_limited\nmessage: Too many requests."
    )
    # No status and no code: their lines are left out, not shown empty.
    bare = ProviderError("connection", "Could not connect.", details="")
    assert error_details(bare) == "category: connection\nmessage: Could not connect."
