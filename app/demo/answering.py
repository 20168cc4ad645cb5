"""Answering one request: first the errors a real server gives before any answer (an unknown
route, a body that is not JSON, input over the context window, nothing queued in scripted mode),
then the next queued item or the demo model's answer (a compaction, a summary, or a reply cut at
the output limit), written in the endpoint's format."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from .channel import Channel
from .conversation import (
    COMPACTION_HEADER,
    encode_compaction,
    is_compaction_prompt,
    read_conversation,
    summary_body,
)
from .model.demo_model import DemoModel
from .prompt_cache import PromptCache
from .render.chat import chat_fault, chat_reply
from .render.compact import compact_fault, compact_reply, user_texts_of
from .render.exchange import Exchange
from .render.responses import responses_fault, responses_reply
from .script import CompactReply, Fault, Reply, ScriptItem
from .wire import (
    Json,
    chat_messages_to_items,
    content_text,
    error_body,
    estimate_tokens,
    input_tokens_of,
    item_type,
    model_list,
    normalize_input,
    offered_tool_names,
    overflow_body,
)


class Answerer:
    """Answers the requests of one server: its queued items first (``take`` pops the next one
    for an endpoint), then in demo mode the demo model."""

    def __init__(
        self, demo: DemoModel, take: Callable[[str], ScriptItem | None], started_at: int
    ) -> None:
        # What answers in demo mode: the demo model, or one that answers or summarises its own
        # way (a benchmark's blank or faithful summarizer).
        self._demo = demo
        self._take = take
        self._started_at = started_at
        self._cache = PromptCache()

    def answer(
        self,
        ch: Channel,
        endpoint: str | None,
        method: str,
        path: str,
        body: Json | None,
        headers: dict[str, str],
        *,
        model: str,
        scripted: bool,
        context_window: int | None,
    ) -> None:
        """Answer one request on ``ch``, as a server for ``model`` in scripted or demo mode
        with a ``context_window`` (None: no limit) does."""
        if endpoint is None:
            ch.send_json(
                404,
                error_body(404, f"Invalid URL ({method} {path})", type_="invalid_request_error"),
            )
            return
        if endpoint == "models":
            ch.send_json(200, model_list(model, self._started_at))
            return
        if body is None:
            ch.send_json(
                400,
                error_body(
                    400,
                    "We could not parse the JSON body of your request. (HINT: This likely means"
                    " you aren't using your HTTP library correctly.)",
                ),
            )
            return
        if endpoint == "chat":
            instructions, items = chat_messages_to_items(body.get("messages"))
        else:
            raw = body.get("instructions")
            instructions = raw if isinstance(raw, str) else ""
            items = normalize_input(body.get("input"))
        input_tokens = input_tokens_of(instructions, items)
        if context_window is not None and input_tokens > context_window:
            ch.send_json(400, overflow_body("messages" if endpoint == "chat" else "input"))
            return
        item = self._take(endpoint)
        if item is None and scripted:
            ch.send_json(
                500,
                error_body(
                    500, f"scripted server: no reply queued for {endpoint}", type_="server_error"
                ),
            )
            return
        cached = (
            0 if endpoint == "compact" else self._cache.cached_tokens(body, instructions, items)
        )
        ex = Exchange(
            body=body,
            model=str(body.get("model") or model),
            stream=bool(body.get("stream")) and endpoint != "compact",
            input_tokens=input_tokens,
            cached_tokens=cached,
            items=tuple(items),
        )
        if item is None:
            self._answer_as_demo(
                ch, endpoint, ex, instructions, items, body, headers, context_window
            )
        else:
            _render(ch, endpoint, item, ex)

    def _answer_as_demo(
        self,
        ch: Channel,
        endpoint: str,
        ex: Exchange,
        instructions: str,
        items: list[Json],
        body: Json,
        headers: dict[str, str],
        context_window: int | None,
    ) -> None:
        tools = offered_tool_names(body.get("tools"))
        if endpoint == "compact":
            summary = self._demo.summarize(read_conversation(instructions, items, tools), "")
            kept = [t for t in user_texts_of(items) if summary_body(t) is None]
            compact_reply(
                ch,
                CompactReply(encrypted_content=encode_compaction(summary)),
                ex,
                user_texts=kept,
                output_tokens=estimate_tokens(summary),
            )
            return
        if items and item_type(items[-1]) == "compaction_trigger":
            # The trigger form: the history before the trigger, compacted into one item.
            conv = read_conversation(instructions, items[:-1], tools)
            summary = self._demo.summarize(conv, "", _output_limit(body))
            _render(ch, endpoint, Reply(compaction=encode_compaction(summary)), ex)
            return
        threshold = _compact_threshold(body)
        if threshold is not None and ex.input_tokens > threshold:
            # Server-side compaction inside this response: the compaction item first, then the
            # answer, as the API streams them.
            conv = read_conversation(instructions, items, tools)
            summary = self._demo.summarize(conv, "")
            reply = self._demo.respond(conv)
            _render(ch, endpoint, replace(reply, compaction=encode_compaction(summary)), ex)
            return
        last = items[-1] if items else None
        last_is_user = (
            last is not None and item_type(last) == "message" and last.get("role") == "user"
        )
        prompt = content_text(last.get("content")) if last is not None and last_is_user else ""
        compaction = headers.get(COMPACTION_HEADER, "").strip().lower() == "compaction" or (
            not tools and last_is_user and is_compaction_prompt(prompt)
        )
        limit = _output_limit(body)
        if compaction:
            history = items[:-1] if last_is_user else items
            conv = read_conversation(instructions, history, tools)
            reply = Reply(text=self._demo.summarize(conv, prompt, limit))
        else:
            reply = self._demo.respond(read_conversation(instructions, items, tools))
        _render(ch, endpoint, _within_limits(reply, limit, ex.input_tokens, context_window), ex)


def _within_limits(
    reply: Reply, limit: int | None, input_tokens: int, context_window: int | None
) -> Reply:
    """As a real server does: the text stops at the output limit, or where the window is
    full (llama.cpp's behaviour), and the reply then ends as cut short."""
    room = None if context_window is None else max(0, context_window - input_tokens)
    caps = [cap for cap in (limit, room) if cap is not None]
    if reply.text is None or not caps or estimate_tokens(reply.text) <= min(caps):
        return reply
    cut = reply.text.encode("utf-8")[: min(caps) * 4].decode("utf-8", "ignore")
    return replace(reply, text=cut, status="incomplete")


def _compact_threshold(body: Json) -> int | None:
    """``compact_threshold`` of a ``context_management`` compaction entry, if the request has
    one (server-side compaction, Responses only)."""
    entries = body.get("context_management")
    if not isinstance(entries, list):
        return None
    for entry in entries:
        if isinstance(entry, dict) and entry.get("type") == "compaction":
            value = entry.get("compact_threshold")
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None


def _output_limit(body: Json) -> int | None:
    """The most the reply may hold, as the request asks: ``max_output_tokens`` (Responses),
    ``max_completion_tokens`` or ``max_tokens`` (Chat Completions)."""
    for key in ("max_output_tokens", "max_completion_tokens", "max_tokens"):
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _render(ch: Channel, endpoint: str, item: ScriptItem, ex: Exchange) -> None:
    """Write a queued or generated item in ``endpoint``'s format."""
    if isinstance(item, Fault):
        {"responses": responses_fault, "chat": chat_fault, "compact": compact_fault}[endpoint](
            ch, item, ex
        )
    elif endpoint == "compact":
        if not isinstance(item, CompactReply):
            ch.send_json(
                500,
                error_body(
                    500,
                    "scripted server: a Reply was queued for compact; queue a CompactReply",
                    type_="server_error",
                ),
            )
            return
        compact_reply(ch, item, ex)
    elif isinstance(item, CompactReply):
        ch.send_json(
            500,
            error_body(
                500,
                f"scripted server: a CompactReply was queued for {endpoint}; queue a Reply",
                type_="server_error",
            ),
        )
    elif endpoint == "chat":
        chat_reply(ch, item, ex)
    else:
        responses_reply(ch, item, ex)
