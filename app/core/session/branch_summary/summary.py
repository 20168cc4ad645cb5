"""A branch left behind, in a few lines, carried into the branch a person goes to (beyond Pi,
which summarises the branch you leave so the model knows what was tried).

The compaction's summarizer writes it: the left branch's messages (as much of their end as fits)
and a short prompt, with a small output limit. When the model cannot (an error, an empty or
cut-short answer, no model at all), the carried notes of that path stand in: the facts and
rules the person stated there, in their own words, else their messages clipped. It reaches the
model as a block it reads like the carried notes, and the person as a note.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...compaction.notes.extraction import extract_chunk
from ...config import CoreConfig
from ...items import Item, is_injected_context, is_message, last_assistant_text, message_text
from ...items import user_message as user_item
from ...providers.base import ModelProvider, ModelRequest, ProviderError
from ...providers.sampling import sample

BRANCH_SUMMARY_OPEN = "<branch_summary>"
BRANCH_SUMMARY_CLOSE = "</branch_summary>"
PROMPT = (
    "The person is leaving this branch of the conversation to try another way. In at most "
    "five short bullet points, say what was tried on it, what came of it and what was "
    "decided, so that whoever continues on the other branch does not repeat it. Only facts "
    "from the conversation; no preamble."
)
# What the request may hold of the branch (its end first), and the summary's output limit.
INPUT_CHARS = 24_000
OUTPUT_TOKENS = 300
NOTE_LINES = 8
LINE_CHARS = 200


@dataclass(frozen=True)
class BranchSummary:
    text: str  # what the model reads (the block's body)
    by_model: bool  # False: the carried notes of the path stood in


def wants_summary(carry: bool | None, config: CoreConfig) -> bool:
    """Whether an op carries a summary: as it says, else as the setting says."""
    return carry if carry is not None else config.branch_summary == "always"


async def summarize_branch(
    items: list[Item], provider: Callable[[], ModelProvider], config: CoreConfig
) -> BranchSummary | None:
    """The summary of a branch's ``items`` (``None`` when the branch said nothing)."""
    said = [item for item in items if is_message(item) and not is_injected_context(item)]
    if not said:
        return None
    try:
        attempt = await sample(
            provider(),
            ModelRequest(
                model=config.compaction_model or config.model,
                instructions="You summarise conversations briefly and exactly.",
                input=[*_tail(said), user_item(PROMPT)],
                tools=[],
                max_output_tokens=OUTPUT_TOKENS,
            ),
            max_retries=min(config.max_retries, 1),
            base_delay=config.retry_base_delay,
            on_retry=lambda *_: None,
        )
        text = (last_assistant_text(attempt.items) or "").strip()
        if text and attempt.stop_reason != "length":
            return BranchSummary(text, by_model=True)
    except ProviderError:
        pass
    return BranchSummary(_notes_of(said), by_model=False)


def summary_item(summary: BranchSummary) -> Item:
    """The block the model reads on the branch it goes to."""
    source = "" if summary.by_model else " (the person's own words from it)"
    return user_item(
        f"{BRANCH_SUMMARY_OPEN}\nOn another branch of this conversation, left behind{source}:\n"
        f"{summary.text}\n{BRANCH_SUMMARY_CLOSE}"
    )


def _tail(items: list[Item]) -> list[Item]:
    """The branch's messages from the end, as many as fit ``INPUT_CHARS``."""
    kept: list[Item] = []
    room = INPUT_CHARS
    for item in reversed(items):
        text = message_text(item)
        if len(text) > room:
            break
        room -= len(text)
        kept.append(item)
    return kept[::-1] or items[-1:]


def _notes_of(items: list[Item]) -> str:
    """The carried notes of the path: the person's facts and rules, else their messages."""
    said = [message_text(item) for item in items if is_message(item, "user")]
    notes = [note for note, _score in extract_chunk(said)] or [" ".join(t.split()) for t in said]
    lines = [note if len(note) <= LINE_CHARS else note[: LINE_CHARS - 1] + "…" for note in notes]
    return "\n".join(f"- {line}" for line in lines[:NOTE_LINES]) or "- (nothing was said)"
