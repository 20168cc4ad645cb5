"""Coco's compaction prompt texts (loaded from ``resources/prompts`` at run time)."""

from __future__ import annotations

from ..items import Item, is_message, message_text
from ..system.resources import read_text

SUMMARY_STYLES = ("handoff", "checkpoint")


def default_prompt(style: str = "handoff") -> str:
    """The built-in summarisation prompt for a summary style."""
    name = "compact_checkpoint.md" if style == "checkpoint" else "compact_handoff.md"
    return read_text("prompts", name).strip()


def summary_prefix() -> str:
    """The text every summary message starts with; it is also how a summary is recognised."""
    return read_text("prompts", "summary_prefix.md").strip()


def build_prompt(
    custom: str | None, style: str, focus: str | None, words: int | None = None
) -> str:
    """The configured prompt if set, else the style's default, then the optional focus, then
    the length the summary must keep to (``words``), when the window sets one: a model that
    knows its limit finishes its summary instead of being cut off by it."""
    prompt = custom.strip() if custom and custom.strip() else default_prompt(style)
    if focus and focus.strip():
        prompt += f"\n\nAdditional focus: {focus.strip()}"
    if words is not None:
        prompt += f"\n\nKeep the summary under {words} words: it must fit a small context window."
    return prompt


def summary_text(summary: str) -> str:
    """The text of the user message that carries a summary into the new history."""
    return f"{summary_prefix()}\n{summary}"


def is_summary_message(item: Item) -> bool:
    return is_message(item, "user") and message_text(item).startswith(summary_prefix() + "\n")
