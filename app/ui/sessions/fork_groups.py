"""The session list's forks grouped under the conversation they came from (no Qt).

A fork (``SessionInfo.forked_from``) is listed right below its source, its own forks below it,
newest first within a group; the group keeps its source's place in the list. A fork whose
source is not listed (deleted, or not matching a search) keeps its own place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.core.sessions.library import SessionInfo

FORK_MARK = "↳ "


def grouped(infos: Sequence[SessionInfo]) -> list[tuple[SessionInfo, int]]:
    """``infos`` (in the list's order) with every fork moved under its source: each with its
    depth (0 for a conversation of its own, 1 for a fork of it, 2 for a fork of a fork…)."""
    listed = {info.id for info in infos}
    forks: dict[str, list[SessionInfo]] = {}
    for info in infos:
        if info.forked_from and info.forked_from in listed and info.forked_from != info.id:
            forks.setdefault(info.forked_from, []).append(info)
    ordered: list[tuple[SessionInfo, int]] = []
    placed: set[str] = set()
    for info in infos:
        if info.id in placed or (info.forked_from in listed and info.forked_from != info.id):
            continue
        stack = [(info, 0)]
        while stack:
            current, depth = stack.pop()
            if current.id in placed:
                continue  # a circle of forks (a damaged index): each once
            placed.add(current.id)
            ordered.append((current, depth))
            stack.extend((fork, depth + 1) for fork in reversed(forks.get(current.id, [])))
    # What is left forks only sessions that fork it back (a damaged index): in its own place.
    ordered.extend((info, 0) for info in infos if info.id not in placed)
    return ordered


def indented(title: str, depth: int) -> str:
    """A title as the list shows it at ``depth`` (a fork marked and indented)."""
    return f"{'    ' * (depth - 1)}{FORK_MARK}{title}" if depth else title
