"""Counting within one compaction: each text is tokenised once.

A compaction counts the messages it keeps three times (choosing them within the budget,
checking the rebuilt history against its room, and accounting the new history); on a long
history that was most of what Coco added to the model's request.
"""

from __future__ import annotations

from ..items import Item
from ..tokens import TokenCounter, item_tokens


class CountMemo:
    """A :class:`TokenCounter` that remembers what it counted (for one compaction only: it
    holds the texts it has seen)."""

    def __init__(self, counter: TokenCounter) -> None:
        self._counter = counter
        self._known: dict[str, int] = {}

    def count(self, text: str) -> int:
        tokens = self._known.get(text)
        if tokens is None:
            tokens = self._known[text] = self._counter.count(text)
        return tokens

    def count_item(self, item: Item) -> int:
        return item_tokens(item, self.count)
