"""The recall tool: the model searches earlier parts of this conversation, including what
compaction removed from its view, and gets the best few excerpts back within a token budget.

:class:`SessionTools` is what a session offers the model: the workspace tools (when a folder is
configured) and recall (unless the user turned it off), behind one ``specs()``/``call()``.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .. import protocol as p
from ..config import CoreConfig
from ..items import Item
from ..tools.calls import ToolError, ToolResult, function_spec, int_arg, parse_arguments, str_arg
from ..tools.mcp.names import PREFIX as MCP_PREFIX
from ..tools.workspace import WorkspaceTools
from .query import SearchQuery, build_query
from .searchable import RECALL_TOOL, asking_message, item_digest

if TYPE_CHECKING:  # the index (and sqlite3) is loaded when a session first needs it
    from ..tools.mcp.servers import McpServers
    from .index import RecallIndex
    from .results import RecallHit, RecallResult

DEFAULT_LIMIT = 5
MAX_LIMIT = 10
# The answer's budget: a share of the window, within these bounds (tokens).
BUDGET_SHARE = 16
MIN_BUDGET = 256
MAX_BUDGET = 4000
DEFAULT_BUDGET = 2000  # when the window is not known
MIN_EXCERPT_CHARS = 160
MAX_EXCERPT_CHARS = 900
USER_EXCERPT_CHARS = 240  # what the find box shows of a match
ANCHOR_CHARS = 60  # the piece of a message's text its row is found by

DESCRIPTION = (
    "Search earlier parts of this conversation: every message from the user and from you, "
    "every tool output (files read, command results) and earlier summaries, including what "
    "compaction removed from your view. Use it when the user refers to something said, "
    "decided, read or computed earlier that you no longer see. Returns the best matching "
    "excerpts with where they come from (turn, role, tool, time)."
)


def recall_budget(window: int | None) -> int:
    """Tokens a recall answer may take: a sixteenth of the window, 256 to 4 000."""
    if window is None:
        return DEFAULT_BUDGET
    return max(MIN_BUDGET, min(MAX_BUDGET, window // BUDGET_SHARE))


class BranchLookup(Protocol):
    """Where a rollout record belongs in the conversation's tree (``TurnTree``)."""

    def record_on_active_path(self, seq: int) -> bool: ...

    def anchor_of(self, seq: int) -> str | None: ...


def _branch_of(tree: BranchLookup | None, seq: int) -> dict[str, Any]:
    """A match's turn and whether it is on the active branch (nothing without a tree)."""
    if tree is None:
        return {}
    return {"turn_id": tree.anchor_of(seq) or "", "on_branch": tree.record_on_active_path(seq)}


class RecallTool:
    """The recall tool of one session: its index, and how it answers."""

    def __init__(
        self,
        rollout: Path,
        *,
        history: Callable[[], list[Item]],
        window: Callable[[], int | None],
        count: Callable[[str], int],
    ) -> None:
        from .index import RecallIndex

        self.index: RecallIndex = RecallIndex(rollout)
        self._history = history
        self._window = window
        self._count = count
        # The conversation's tree (set by the session): the model searches its active branch;
        # the user's find searches every branch and says where each match is.
        self.tree: BranchLookup | None = None

    def spec(self) -> dict[str, Any]:
        return function_spec(
            RECALL_TOOL,
            DESCRIPTION,
            {
                "query": {
                    "type": "string",
                    "description": "Words to look for: names, values, identifiers, phrases "
                    "(plain words, not a regex).",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "description": f"Most excerpts to return. Default: {DEFAULT_LIMIT}.",
                },
            },
            required=["query"],
        )

    async def call(self, arguments: str) -> ToolResult:
        """Search for the query in ``arguments``. Never raises."""
        try:
            args = parse_arguments(RECALL_TOOL, arguments)
            query = str_arg(args, "query")
            limit = min(int_arg(args, "limit", minimum=1) or DEFAULT_LIMIT, MAX_LIMIT)
        except ToolError as exc:
            return ToolResult(str(exc), ok=False)
        return await self.search(query, limit)

    async def search(self, text: str, limit: int = DEFAULT_LIMIT) -> ToolResult:
        """The formatted answer for ``text``: what the tool returns to the model."""
        shown = _shown_query(text)
        if not text.strip():
            return ToolResult("recall needs words to look for: the query is empty.", ok=False)
        query = build_query(text)
        if query is None:
            return ToolResult(
                f"The query {shown} holds no words to search for (only punctuation or "
                "symbols). Ask again with words from what you are looking for.",
                ok=False,
            )
        tree = self.tree
        where = tree.record_on_active_path if tree else None
        result = await self.find(query, limit, where, without_asking=True)
        if isinstance(result, str):
            return ToolResult(result, ok=False)
        return ToolResult(self._format(shown, query, result), ok=True)

    async def matches(self, text: str, limit: int) -> p.ConversationMatches:
        """The same search for the user (the find box): every match, best first, with how the
        window finds its row."""
        query = build_query(text) if text.strip() else None
        if query is None:
            return p.ConversationMatches(query=text, message="Type words to look for.")
        result = await self.find(query, limit)
        if isinstance(result, str):
            return p.ConversationMatches(query=text, message=result)
        tree = self.tree
        found = [
            p.ConversationMatch(
                turn=hit.turn, role=hit.role, tool=hit.tool, time=hit.time,
                excerpt=excerpt(hit.text, query.words, USER_EXCERPT_CHARS), call_id=hit.call_id,
                anchor=excerpt(hit.text, query.words, ANCHOR_CHARS).strip("…").strip(),
                in_view=hit.in_view and (tree is None or tree.record_on_active_path(hit.seq)),
                **_branch_of(tree, hit.seq),
            )
            for hit in result.hits
        ]
        message = "" if found else f"Nothing in this conversation matches {_shown_query(text)}."
        if result.note:
            message = f"{message} ({result.note})".strip()
        return p.ConversationMatches(query=text, matches=found, message=message)

    async def find(
        self,
        query: SearchQuery,
        limit: int,
        where: Callable[[int], bool] | None = None,
        *,
        without_asking: bool = False,
    ) -> RecallResult | str:
        """The index's answer (``where``: only the records it accepts; ``without_asking``:
        never the user's message the model is answering, which asked the question), or why
        there is none in words."""
        items = list(self._history())
        try:
            return await asyncio.to_thread(self._find, query, limit, items, where, without_asking)
        except Exception as exc:  # noqa: BLE001 - a broken index must not end the turn
            return f"recall could not search this conversation: {exc}"

    def _find(
        self,
        query: SearchQuery,
        limit: int,
        items: list[Item],
        where: Callable[[int], bool] | None,
        without_asking: bool,
    ) -> RecallResult:
        in_view = frozenset(d for d in map(item_digest, items) if d is not None)
        asking = asking_message(items) if without_asking else None
        exclude = frozenset() if asking is None else frozenset({asking})
        return self.index.search(query, limit, in_view, where, exclude)

    def _format(self, shown: str, query: SearchQuery, result: RecallResult) -> str:
        notes = [n for n in (query.note, result.note) if n]
        tail = f"\n(Note: {'; '.join(notes)}.)" if notes else ""
        if not result.hits:
            return f"No earlier part of this conversation matches {shown}.{tail}"
        budget = recall_budget(self._window())
        hits = result.hits
        while True:
            width = max(MIN_EXCERPT_CHARS, min(MAX_EXCERPT_CHARS, budget * 3 // len(hits)))
            blocks = [
                f"[{n}] {_where(hit, mixed=result.all_words)}\n"
                f"{excerpt(hit.text, query.words, width)}"
                for n, hit in enumerate(hits, start=1)
            ]
            head = _header(shown, hits, result.all_words)
            output = "\n\n".join([head, *blocks]) + tail
            if self._count(output) <= budget or len(hits) == 1:
                break
            hits = hits[:-1]
        if self._count(output) > budget:  # one excerpt, still too long: cut it further
            width = max(MIN_EXCERPT_CHARS // 2, budget * 2)
            output = "\n\n".join(
                [head, f"[1] {_where(hits[0])}\n{excerpt(hits[0].text, query.words, width)}"]
            ) + tail
        return output


class SessionTools:
    """The tools a session offers: the workspace's, recall unless it is turned off, and the
    tools of the MCP servers configured."""

    def __init__(
        self,
        config: CoreConfig,
        recall: RecallTool,
        mcp: McpServers | None = None,
        *,
        calls_tools: bool = True,
    ) -> None:
        self.workspace = WorkspaceTools(config.workspace, config.tool_output_budget)
        self._recall = recall if config.recall else None
        self.mcp = mcp
        # False when the server said the model cannot call tools (its chat template has no
        # tool support): none is offered, none would ever be called.
        self.calls_tools = calls_tools

    @staticmethod
    def changed(old: CoreConfig, new: CoreConfig) -> bool:
        """Whether the tools offered differ between two configurations."""
        fields = ("workspace", "tool_output_budget", "recall")
        return any(getattr(old, name) != getattr(new, name) for name in fields)

    @property
    def enabled(self) -> bool:
        """True when a workspace folder is usable (the environment block names it)."""
        return self.calls_tools and self.workspace.enabled

    def environment_context(self) -> str:
        return self.workspace.environment_context()

    def specs(self) -> list[dict[str, Any]]:
        if not self.calls_tools:
            return []
        specs = self.workspace.specs()
        if self._recall is not None:
            specs.append(self._recall.spec())
        if self.mcp is not None:
            specs.extend(self.mcp.specs())
        return specs

    async def call(self, name: str, arguments: str, call_id: str = "") -> ToolResult:
        if self.mcp is not None and self.mcp.owns(name):
            return await self.mcp.call(name, arguments, call_id)
        if name == RECALL_TOOL and self._recall is not None:
            return await self._recall.call(arguments)
        if name == RECALL_TOOL:
            return ToolResult("recall is turned off in the settings", ok=False)
        if name.startswith(MCP_PREFIX):  # a server's tool that is not offered now
            return ToolResult(
                f"the tool {name!r} is not available now: its MCP server is not running "
                "(still starting, stopped after an error, or turned off)", ok=False,
            )
        return await self.workspace.call(name, arguments)


# ------------------------------------------------------------------------------ formatting


def excerpt(text: str, words: list[str], width: int) -> str:
    """About ``width`` characters of ``text`` around where most of ``words`` occur."""
    text = text.strip()
    if len(text) <= width:
        return text
    positions = sorted(
        match.start() for match in _word_pattern(words).finditer(text)
    ) if words else []
    start = 0
    if positions:
        best, best_count = positions[0], 0
        for pos in positions:
            count = sum(1 for other in positions if pos <= other < pos + width * 2 // 3)
            if count > best_count:
                best, best_count = pos, count
        start = max(0, best - width // 3)
    end = min(len(text), start + width)
    start = max(0, end - width)
    if start > 0:
        space = text.find(" ", start, start + 40)
        start = space + 1 if space >= 0 else start
    if end < len(text):
        space = text.rfind(" ", end - 40, end)
        end = space if space > start else end
    return ("…" if start > 0 else "") + text[start:end].strip() + ("…" if end < len(text) else "")


def _word_pattern(words: list[str]) -> re.Pattern[str]:
    # A word's stem-like prefix, so "limit" also marks "limiter" and "limits".
    stems = sorted({w[: max(4, len(w) - 3)] if len(w) > 5 else w for w in words}, key=len,
                   reverse=True)
    return re.compile(
        r"(?<![^\W_])(?:" + "|".join(re.escape(s) for s in stems) + ")", re.IGNORECASE
    )


def _where(hit: RecallHit, *, mixed: bool = False) -> str:
    """Where a hit comes from; ``mixed``: other hits hold every word, so one with only some
    of them says so."""
    if hit.role == "tool":
        what = f"output of {hit.tool}" if hit.tool else "tool output"
    elif hit.role == "assistant" and hit.tool:
        what = f"your call to {hit.tool}"
    else:
        what = {
            "user": "the user's message",
            "assistant": "your answer",
            "summary": "an earlier compaction summary",
        }.get(hit.role, hit.role)
    turn = f"turn {hit.turn}" if hit.turn else "before the first message"
    when = hit.time[:16].replace("T", " ") + " UTC" if hit.time else ""
    view = "still in your view" if hit.in_view else "no longer in your view"
    some = "some of the words" if mixed and not hit.all_words else ""
    return " · ".join(part for part in (turn, what, when, view, some) if part)


def _header(shown: str, hits: list[RecallHit], all_words: bool) -> str:
    count = f"{len(hits)} excerpt{'s' if len(hits) != 1 else ''}"
    if not all_words:
        return (
            f"No earlier passage holds every word of {shown}; {count} with some of them, "
            "the best first:"
        )
    return f"{count} from earlier in this conversation for {shown}, the best first:"


def _shown_query(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= 80 else flat[:79] + "…")
