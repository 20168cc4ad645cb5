"""The faults that look alike on every endpoint: an HTTP error status (with its retry headers),
a 200 whose JSON is cut short, and a unary body promised but never delivered whole."""

from __future__ import annotations

import math

from ..channel import Channel
from ..script import Fault
from ..wire import error_body
from .exchange import Exchange


def fault_headers(fault: Fault) -> dict[str, str]:
    """``Retry-After`` (seconds) and ``retry-after-ms`` when the fault sets a delay."""
    if fault.retry_after is None:
        return {}
    seconds = fault.retry_after
    text = str(int(seconds)) if float(seconds).is_integer() else f"{seconds:g}"
    return {"Retry-After": text, "retry-after-ms": str(math.ceil(seconds * 1000))}


def status_fault(ch: Channel, fault: Fault) -> None:
    """An HTTP error status with the fault's message, code and retry headers."""
    ch.send_json(
        fault.http_status,
        error_body(fault.http_status, fault.message, fault.error_code),
        fault_headers(fault),
    )


def malformed(ch: Channel, ex: Exchange, broken: str, event: str | None = None) -> None:
    """HTTP 200 whose JSON (the whole body, or the first SSE event's data) is cut short."""
    if ex.stream:
        ch.start_stream()
        prefix = f"event: {event}\n" if event else ""
        ch.raw_event(f"{prefix}data: {broken}\n\n")
        ch.end_stream()
    else:
        ch.send_bytes(200, broken.encode("utf-8"), "application/json")


def unary_drop(ch: Channel, fault: Fault) -> None:
    """Cut/hang on a unary request: promise a body and never deliver it whole."""
    if fault.kind == "hang":
        ch.wait(fault.seconds)
        ch.abort()
        return
    ch.send_truncated(
        200, b'{"id": "resp_partial", "object": "response", "output": []}', "application/json"
    )
