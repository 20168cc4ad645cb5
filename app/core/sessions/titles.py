"""Session titles: the one made from a user message (one line, at most 80 characters), the one
a user types, and the rollout record that names a session."""

from __future__ import annotations

NEW_CONVERSATION_TITLE = "New conversation"
TITLE_MAX_CHARS = 80
# Record type whose payload ``{"title": ...}`` names a session (``SessionIndex.rename``).
SESSION_TITLE_RECORD = "session_title"


def make_title(text: str) -> str:
    """A one-line title from a user message: whitespace collapsed, at most 80 chars with "…"."""
    title = " ".join(text.split())
    if not title:
        return NEW_CONVERSATION_TITLE
    if len(title) > TITLE_MAX_CHARS:
        title = title[: TITLE_MAX_CHARS - 1].rstrip() + "…"
    return title


def _given_title(title: str) -> str:
    """A title the user typed, trimmed; ``ValueError`` when nothing is left."""
    title = title.strip()
    if not title:
        raise ValueError("A session title cannot be empty")
    return title

