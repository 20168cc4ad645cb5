"""The model's view of the conversation and the usage accounting that drives auto-compaction.

Usage follows Codex (spec section 5): the ``total_tokens`` of the last completed response plus an
estimate of every item appended since. Each item's estimate is computed once, when it is added,
so appending never re-counts the history.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable, Collection
from dataclasses import dataclass

from ..items import Item, is_message, item_count_parts, message_text
from ..tokens.counter import HUGE_TEXT_CHARS, TokenCounter
from ..tokens.text_key import TextKey


@dataclass(frozen=True)
class HistorySnapshot:
    """Everything needed to put the history back exactly as it was (undo of a compaction)."""

    items: tuple[Item, ...]
    item_tokens: tuple[int, ...]
    api_total: int | None
    mark: int
    version: int


class ContextHistory:
    """Items sent as ``input`` on the next request, with incremental token accounting."""

    def __init__(self, counter: TokenCounter, instructions: str = "") -> None:
        self._counter = counter
        self._items: list[Item] = []
        self._item_tokens: list[int] = []
        self._sum = 0  # estimate of all items
        self._instructions_tokens = counter.count(instructions) if instructions else 0
        self._tools_tokens = 0  # tool definitions: sent with every turn request, counted too
        # Last API-reported total and how many items the history had when it was reported.
        self._api_total: int | None = None
        self._mark = 0
        self._since_mark = 0  # estimate of counted items at or after the mark
        # Items appended with ``defer_count`` (resume) carry -1 until something needs them:
        # most items of a long rollout are replaced by a later compaction and never counted.
        self._pending = 0
        self.version = 0  # bumps on every change; "never compact twice on the same history"

    # ------------------------------------------------------------------ reading

    def items(self) -> list[Item]:
        """A deep copy, so callers can never mutate the history."""
        return copy.deepcopy(self._items)

    def raw_items(self) -> list[Item]:
        """The live list, for read-only use inside the core (no copy)."""
        return self._items

    def __len__(self) -> int:
        return len(self._items)

    def item_tokens(self) -> list[int]:
        self._count_pending(0)
        return list(self._item_tokens)

    def known_item_tokens(self) -> list[int]:
        """Each item's count, -1 for those not counted yet (nothing is counted here)."""
        return list(self._item_tokens)

    def tokens_from(self, start: int) -> int:
        """Tokens of the items from ``start`` on, counting only those (a turn's new message,
        not the whole resumed history)."""
        self._count_pending(start)
        return sum(self._item_tokens[start:])

    def estimate(self) -> int:
        """Local estimate of the whole next request (items, instructions, tool definitions)."""
        self._count_pending(0)
        return self._sum + self.fixed_tokens

    @property
    def fixed_tokens(self) -> int:
        """What every turn request holds besides the history: instructions and tool definitions."""
        return self._instructions_tokens + self._tools_tokens

    def usage(self, calibrate: Callable[[int], int] | None = None) -> int:
        """What the next request will hold, as far as the core knows (spec section 5). The
        server's own total is taken as it is; ``calibrate`` turns Coco's estimates (all of it
        before a report, what was added since after one) into the server's tokens."""
        if self._api_total is None:
            estimate = self.estimate()
            return calibrate(estimate) if calibrate else estimate
        self._count_pending(self._mark)
        since = calibrate(self._since_mark) if calibrate else self._since_mark
        return self._api_total + since

    def _count_pending(self, start: int) -> None:
        """Count deferred items from ``start`` on."""
        if not self._pending:
            return
        for index in range(start, len(self._items)):
            if self._item_tokens[index] < 0:
                self._set_count(index, self._counter.count_item(self._items[index]))

    def _set_count(self, index: int, tokens: int) -> None:
        self._item_tokens[index] = tokens
        self._sum += tokens
        self._pending -= 1
        if index >= self._mark:
            self._since_mark += tokens

    async def count_deferred(self) -> None:
        """Count the items a resume deferred (``defer_count``) in a worker thread: the view
        of a long branch, read again for a switch or an open, holds thousands of messages, a
        quarter of a second of counting on the event loop, which is the window's thread.
        Huge texts are left to ``_count_pending`` (their estimates are made on the loop); an
        item replaced meanwhile keeps its own count to come."""
        if not self._pending:
            return
        tokens = self._item_tokens
        todo = [(index, item) for index, item in enumerate(self._items) if tokens[index] < 0]
        count = self._counter.count_item

        def count_all() -> list[int | None]:
            return [
                count(item) if len(item_count_parts(item)[0]) < HUGE_TEXT_CHARS else None
                for _index, item in todo
            ]

        counts = await asyncio.to_thread(count_all)
        items, tokens = self._items, self._item_tokens
        for (index, item), counted in zip(todo, counts, strict=True):
            if counted is not None and index < len(items) and items[index] is item and (
                tokens[index] < 0
            ):
                self._set_count(index, counted)

    @property
    def usage_is_estimate(self) -> bool:
        if self._api_total is None:
            return True
        self._count_pending(self._mark)
        return self._since_mark > 0

    @property
    def api_total(self) -> int | None:
        return self._api_total

    @property
    def mark(self) -> int:
        return self._mark

    # ------------------------------------------------------------------ changing

    def set_instructions(self, instructions: str) -> None:
        self._instructions_tokens = self._counter.count(instructions) if instructions else 0

    def set_tools(self, specs: list[dict[str, object]]) -> None:
        """The tool definitions sent with every turn (their JSON is what the model reads)."""
        self._tools_tokens = self._counter.count(json.dumps(specs)) if specs else 0

    def append(self, item: Item, *, defer_count: bool = False) -> int:
        """Append one item; returns its token estimate (-1 when deferred). O(size of the
        item); with ``defer_count`` (replaying a rollout) it is counted only when needed."""
        if defer_count:
            self._items.append(item)
            self._item_tokens.append(-1)
            self._pending += 1
            self.version += 1
            return -1
        tokens = self._counter.count_item(item)
        self._items.append(item)
        self._item_tokens.append(tokens)
        self._sum += tokens
        self._since_mark += tokens
        self.version += 1
        return tokens

    def replace(
        self, items: list[Item], counts: list[int] | None = None, *, defer_count: bool = False
    ) -> None:
        """Replace the whole history (compaction); usage becomes a local estimate.

        ``counts``, when the caller already knows them, are the items' token counts (-1 for
        one it does not know). Otherwise user messages the history already holds (those a
        compaction keeps, which a remote compaction sends back as new objects) keep their
        counts instead of being tokenised again: tens of milliseconds for a long history.
        With ``defer_count`` (replaying a rollout) nothing is counted now: each item is
        counted when something needs it, as :meth:`append` defers."""
        if defer_count:
            self._items = list(items)
            self._item_tokens = [-1] * len(self._items)
            self._sum = 0
            self._pending = len(self._items)
            self._api_total = None
            self._mark = len(self._items)
            self._since_mark = 0
            self.version += 1
            return
        if counts is None:
            known: dict[str, int] = {}
            for old, tokens in zip(self._items, self._item_tokens):
                if tokens >= 0 and is_message(old, "user"):
                    known[message_text(old)] = tokens
            counts = [
                known.get(message_text(item), -1) if is_message(item, "user") else -1
                for item in items
            ]
        self._items = list(items)
        self._item_tokens = [
            tokens if tokens >= 0 else self._counter.count_item(item)
            for item, tokens in zip(self._items, counts, strict=True)
        ]
        self._sum = sum(self._item_tokens)
        self._pending = 0
        self._api_total = None
        self._mark = len(self._items)
        self._since_mark = 0
        self.version += 1

    def recount(self, texts: Collection[str]) -> bool:
        """Count again the items whose readable text is one of ``texts`` (huge texts whose
        estimate the counter has since replaced by an exact count); True if a count changed.
        Items not counted yet are left to be counted when needed."""
        # By ``TextKey``: hashing each huge text whole blocked every thread 10-15 ms.
        wanted = {TextKey(text) for text in texts}
        if not wanted:
            return False
        shortest = min(len(key.text) for key in wanted)
        changed = False
        for index, item in enumerate(self._items):
            old = self._item_tokens[index]
            if old < 0:
                continue
            readable = item_count_parts(item)[0]
            if len(readable) < shortest or TextKey(readable) not in wanted:
                continue
            tokens = self._counter.count_item(item)
            if tokens != old:
                changed = True
                self._item_tokens[index] = tokens
                self._sum += tokens - old
                if index >= self._mark:
                    self._since_mark += tokens - old
        return changed

    def record_api_usage(self, total_tokens: int) -> None:
        """A response completed: its total covers everything up to the current end."""
        self._api_total = total_tokens
        self._mark = len(self._items)
        self._since_mark = 0

    def set_usage(self, api_total: int | None, mark: int) -> None:
        """Restore accounting from a persisted token count (resume)."""
        mark = max(0, min(mark, len(self._items)))
        self._api_total = api_total
        self._mark = mark
        self._since_mark = sum(t for t in self._item_tokens[mark:] if t >= 0)

    def mark_full(self, context_window: int) -> None:
        """After a context-window error the usage is the full window (spec section 5)."""
        self.record_api_usage(context_window)

    def snapshot(self) -> HistorySnapshot:
        return HistorySnapshot(
            items=tuple(self._items),  # items are never mutated in place
            item_tokens=tuple(self._item_tokens),
            api_total=self._api_total,
            mark=self._mark,
            version=self.version,
        )

    def restore(self, snap: HistorySnapshot) -> None:
        self._items = list(snap.items)
        self._item_tokens = list(snap.item_tokens)
        self._sum = sum(t for t in self._item_tokens if t >= 0)
        self._pending = sum(1 for t in self._item_tokens if t < 0)
        self._api_total = snap.api_total
        self._mark = snap.mark
        self._since_mark = sum(t for t in self._item_tokens[snap.mark :] if t >= 0)
        self.version += 1
