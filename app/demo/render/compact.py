"""A ``CompactReply`` or a ``Fault`` on ``/responses/compact``: always one JSON object, the
user messages kept and then the compaction item."""

from __future__ import annotations

from ..channel import Channel
from ..script import CompactReply, Fault
from ..wire import (
    Json,
    compaction_item,
    content_text,
    error_body,
    estimate_tokens,
    new_id,
    now,
    overflow_body,
    user_message,
)
from .exchange import Exchange, usage_with_override
from .faults import status_fault, unary_drop


def user_texts_of(items: tuple[Json, ...] | list[Json]) -> list[str]:
    """The text of every user message among ``items``, in order."""
    return [
        content_text(item.get("content"))
        for item in items
        if item.get("type", "message") == "message" and item.get("role") == "user"
    ]


def compaction_output(user_texts: list[str], encrypted_content: str) -> list[Json]:
    """The compact endpoint's output: user messages, then one compaction item."""
    return [*(user_message(text) for text in user_texts), compaction_item(encrypted_content)]


def compact_reply(
    ch: Channel,
    reply: CompactReply,
    ex: Exchange,
    user_texts: list[str] | None = None,
    output_tokens: int | None = None,
) -> None:
    """A CompactReply on ``/responses/compact`` (always unary JSON).

    Without an explicit ``reply.output`` the answer keeps ``user_texts`` (default: every user
    message of the request) and appends the compaction item.
    """
    kept = user_texts if user_texts is not None else user_texts_of(ex.items)
    output = (
        reply.output
        if reply.output is not None
        else compaction_output(kept, reply.encrypted_content)
    )
    produced = (
        output_tokens if output_tokens is not None else estimate_tokens(reply.encrypted_content)
    )
    usage = usage_with_override(ex.input_tokens, produced, ex.cached_tokens, 0, reply.usage)
    ch.send_json(
        200,
        {
            "id": new_id("cmp"),
            "object": "response.compaction",
            "created_at": now(),
            "output": output,
            "usage": usage,
        },
    )


def compact_fault(ch: Channel, fault: Fault, ex: Exchange) -> None:
    """A Fault on ``/responses/compact``: everything is unary here."""
    if fault.kind == "status":
        status_fault(ch, fault)
    elif fault.kind == "overflow":
        ch.send_json(400, overflow_body("input"))
    elif fault.kind == "inband_error":
        ch.send_json(500, error_body(500, fault.message, fault.error_code))
    elif fault.kind == "malformed":
        ch.send_bytes(
            200, b'{"id": "cmp_broken", "object": "response.compaction", "outp', "application/json"
        )
    else:
        unary_drop(ch, fault)
