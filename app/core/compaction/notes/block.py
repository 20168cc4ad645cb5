"""The carried-notes block (spec section 10): its label and headings, its text as the model
reads it, and reading a block back out of a history."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ...items import Item, is_message, message_text, user_message

# The label the block opens with: how the next compaction (and the Model view, and the demo
# model) recognises it. Its first line never says "summary": it is not one.
NOTES_LABEL = "[Coco carried notes]"
NOTES_INTRO = (
    f"{NOTES_LABEL} Kept from older messages compacted out of your view: what the user told "
    "you, in their own words, and the files and commands of the earlier work. Still true "
    "unless the user says otherwise."
)
NOTES_HEADING = "The user told you (oldest first):"
CHANGED_HEADING = "Files changed (newest first):"
READ_HEADING = "Files read (newest first):"
COMMANDS_HEADING = "Commands run (newest first):"
_HEADINGS = (NOTES_HEADING, CHANGED_HEADING, READ_HEADING, COMMANDS_HEADING)


@dataclass(frozen=True)
class CarriedOver:
    """The carried notes of one compaction: the user's facts (oldest first) and the files
    and commands of the earlier work (newest first)."""

    notes: tuple[str, ...] = ()
    files_changed: tuple[str, ...] = ()
    files_read: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    # Notes the budget forced out at this compaction (none unless it was full).
    dropped: int = 0

    @property
    def empty(self) -> bool:
        return not (self.notes or self.files_changed or self.files_read or self.commands)

    @property
    def files(self) -> list[str]:
        """Every file named, changed first, each once, with what was done to it."""
        seen: set[str] = set()
        shown: list[str] = []
        for paths, verb in ((self.files_changed, "changed"), (self.files_read, "read")):
            for path in paths:
                if path not in seen:
                    seen.add(path)
                    shown.append(f"{path} ({verb})")
        return shown

    def text(self) -> str:
        """The block's text, as the model reads it."""
        parts = [NOTES_INTRO]
        for heading, lines, quote in (
            (NOTES_HEADING, self.notes, False),
            (CHANGED_HEADING, self.files_changed, False),
            (READ_HEADING, self.files_read, False),
            (COMMANDS_HEADING, self.commands, True),
        ):
            if lines:
                body = "\n".join(f"- `{line}`" if quote else f"- {line}" for line in lines)
                parts.append(f"{heading}\n{body}")
        return "\n\n".join(parts)

    def item(self) -> Item:
        return user_message(self.text())


def is_notes_message(item: Item) -> bool:
    """Whether ``item`` is a carried-notes block (recognised by its label). Looks at the first
    text part only: called on every user message of a history, it must not join them."""
    if not is_message(item, "user"):
        return False
    content = item.get("content")
    if isinstance(content, str):
        return content.startswith(NOTES_LABEL)
    if isinstance(content, list) and content:
        first = content[0]
        text = first.get("text") if isinstance(first, dict) else first
        return isinstance(text, str) and text.startswith(NOTES_LABEL)
    return False


def is_notes_text(text: str) -> bool:
    return text.startswith(NOTES_LABEL)


def notes_from_text(text: str) -> CarriedOver:
    """A block's text read back into its lists (what the previous compaction carried)."""
    sections: dict[str, list[str]] = {heading: [] for heading in _HEADINGS}
    current: list[str] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped in sections:
            current = sections[stripped]
        elif current is not None and stripped.startswith("- "):
            entry = stripped[2:].strip()
            if current is sections[COMMANDS_HEADING] and len(entry) > 1:
                entry = entry.removeprefix("`").removesuffix("`")
            if entry:
                current.append(entry)
    return CarriedOver(
        notes=tuple(sections[NOTES_HEADING]),
        files_changed=tuple(sections[CHANGED_HEADING]),
        files_read=tuple(sections[READ_HEADING]),
        commands=tuple(sections[COMMANDS_HEADING]),
    )


def previous_notes(history: Iterable[Item]) -> CarriedOver:
    """The newest carried-notes block in ``history`` (empty when there is none)."""
    found: Item | None = None
    for item in history:
        if is_notes_message(item):
            found = item
    return notes_from_text(message_text(found)) if found is not None else CarriedOver()
