"""The offline demo model: which kind of answer each request gets.

It is not clever; it is honest about what it sees. A user's message gets a tool call when it
asks about files (or about something no longer in view), otherwise an answer in words or in the
Markdown it asks for; a tool's output gets described; a compaction summary gets picked up from;
a compaction request gets a real extractive handoff summary.
"""

from __future__ import annotations

from ..attachments import attachments_answer
from ..conversation import Conversation
from ..phrasing import conversation_question, is_greeting
from ..script import Reply, ToolCall
from ..summary import asks_in_summary, build_summary, parse_sections
from .answers import (
    answer_first,
    answer_from_notes,
    answer_general,
    answer_greeting,
    answer_previous,
    answer_recap,
)
from .formats import requested_formats
from .look_back import answer_from_view, is_look_back, recall_call
from .markdown import formatted_answer
from .mcp_calls import example_call, example_hint
from .tool_calls import file_intent
from .tool_results import describe_output

# Said before an answer to a request it has answered before (a regenerated turn sends the same
# input again): the offline demo shows that regenerating gives another answer.
AGAIN_OPENINGS = (
    "Here is another take.",
    "Let me put that differently.",
    "One more way to see it.",
)


class DemoModel:
    """Answers one request. The input is its memory, but for one thing: it counts the requests
    it has seen, so the same input asked again (a regeneration) gets another answer."""

    def __init__(self) -> None:
        self._seen: dict[int, int] = {}

    def respond(self, conv: Conversation) -> Reply:
        """The answer to a normal turn request; another one when the same input comes again."""
        reply = self._respond(conv)
        key = hash((conv.instructions, tuple((e.kind, e.text) for e in conv.entries)))
        times = self._seen.get(key, 0)
        self._seen[key] = times + 1
        if times and reply.text and not reply.function_calls:
            opening = AGAIN_OPENINGS[(times - 1) % len(AGAIN_OPENINGS)]
            return Reply(text=f"{opening} (answer {times + 1})\n\n{reply.text}")
        return reply

    def _respond(self, conv: Conversation) -> Reply:
        last = conv.last
        if last is None:
            return Reply(text="There is no message for me to answer yet. Say something!")
        if last.kind == "output":
            return Reply(text=describe_output(conv, last))
        if last.kind == "summary":
            return Reply(text=self._continue_from_summary(last.text))
        if last.kind != "user":
            return Reply(text="I'm waiting for your next message.")
        if last.attachments:
            return Reply(text=attachments_answer(last.text, list(last.attachments)))
        tool_call = (
            self._tool_call_for(last.text, conv.tools)
            or example_call(conv, last.text)
            or recall_call(conv, last.text)
        )
        if tool_call is not None:
            return Reply(function_calls=[tool_call])
        return Reply(text=self._answer(conv, last.text))

    def summarize(self, conv: Conversation, prompt: str, max_tokens: int | None = None) -> str:
        """The handoff summary a compaction request asks for, within its output limit."""
        return build_summary(conv, prompt, max_tokens)

    # ------------------------------------------------------------------------------ tools

    def _tool_call_for(self, text: str, tools: set[str]) -> ToolCall | None:
        intent = file_intent(text)
        if intent is None:
            return None
        name, args = intent
        if name not in tools:
            return None
        return ToolCall(name=name, arguments=args)

    # ---------------------------------------------------------------------------- answers

    def _answer(self, conv: Conversation, text: str) -> str:
        lowered = text.lower()
        earlier = conv.user_texts[:-1]
        summary_asks = [a for s in conv.summaries for a in asks_in_summary(s)]
        about_conversation = conversation_question(lowered)
        if about_conversation == "first":
            return answer_first(earlier, summary_asks, conv.summaries)
        if about_conversation == "previous":
            return answer_previous(earlier, summary_asks)
        if about_conversation == "recap":
            return answer_recap(earlier, summary_asks, conv.summaries)
        recalled = answer_from_notes(text, conv.notes)
        if recalled is not None:
            return recalled
        if is_look_back(text) and (seen := answer_from_view(conv, text)) is not None:
            return seen  # checked before any claim that it left the view
        if about_conversation == "count":
            return f"I can see **{len(conv.user_texts)}** message(s) from you in this request" + (
                ", plus a summary of an earlier part of the conversation."
                if conv.summaries
                else "."
            )
        if file_intent(text) is not None:
            return (
                "I can't look at your files here: this request offered me no workspace "
                "tools. Open a workspace folder in Coco and ask again."
            )
        formats = requested_formats(text)
        if formats.any:
            return formatted_answer(text, formats, earlier)
        if is_greeting(lowered) and len(lowered.split()) <= 6:
            return answer_greeting(earlier, example_hint(conv.tools))
        return answer_general(text, earlier, summary_asks, conv.summaries, conv.opaque_compactions)

    def _continue_from_summary(self, summary: str) -> str:
        sections = parse_sections(summary)
        pending = sections.get("Open items") or sections.get("Next Steps") or []
        lines = ["Picking up from the summary of the earlier conversation."]
        if pending:
            lines += ["", "Still open:", *[f"- {p}" for p in pending[:5]]]
        else:
            lines += ["", "Nothing is marked as open there, so tell me what to do next."]
        return "\n".join(lines)
