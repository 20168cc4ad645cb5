"""Counting within compactions: each text is tokenised once.

A compaction counts the messages it keeps three times (choosing them within the budget,
checking the rebuilt history against its room, and accounting the new history); on a long
history that was most of what Coco added to the model's request.

The next compaction sees most of the same texts again: the newest user messages it keeps were
kept by the last one too, the carried-notes block it merges was built by it, and a compaction
run again after an undo counts exactly what the first run counted. So the counts of the last
compaction are kept, beside the running one's, and tokenising is left to the texts that are new.
"""

from __future__ import annotations

from ..items import Item
from ..tokens.counter import BIG_TEXT_CHARS, TokenCounter, item_tokens


class CountMemo:
    """A :class:`TokenCounter` that remembers what it counted: in the compaction running now
    (every text) and in the one before (the texts under :data:`BIG_TEXT_CHARS`: longer ones
    the counter keeps itself). :meth:`begin` starts the next compaction's counts."""

    def __init__(self, counter: TokenCounter) -> None:
        self._counter = counter
        self._known: dict[str, int] = {}
        self._last: dict[str, int] = {}
        # Whether the counts kept are exact: estimates made before the tokenizer loaded are
        # not what the counter says once it has, so the next compaction does not see them.
        self._exact = counter.exact

    def begin(self) -> None:
        """A new compaction starts: what the last one counted is kept for it to look up, and
        what the one before counted goes (all of it, when the tokenizer has loaded since)."""
        known, self._known = self._known, {}
        if self._counter.exact is not self._exact:
            self._exact = self._counter.exact
            known = {}
        self._last = {text: tokens for text, tokens in known.items() if len(text) < BIG_TEXT_CHARS}

    def count(self, text: str) -> int:
        tokens = self._known.get(text)
        if tokens is None:
            tokens = self._last.get(text)
            if tokens is None:
                tokens = self._counter.count(text)
            self._known[text] = tokens
        return tokens

    def count_item(self, item: Item) -> int:
        return item_tokens(item, self.count)
