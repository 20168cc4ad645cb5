"""Running a tool call of the model: shown, run, its output fitted to what a compacted history
can hold, and added to the conversation."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ... import protocol as p
from ...compaction.fit import truncate_text
from ...items import Item, function_call_output

if TYPE_CHECKING:
    from ...compaction.runner import Compactor
    from ...recall import SessionTools
    from ...tokens.counter import TokenCounter
    from .items import TurnItems

# A tool output is never cut below this many tokens, however small the window.
TOOL_OUTPUT_FLOOR = 256


class ToolCalls:
    """Runs the model's tool calls through the session's tools."""

    def __init__(
        self,
        *,
        tools: Callable[[], SessionTools],
        counter: TokenCounter,
        compactor: Compactor,
        items: TurnItems,
        emit: Callable[[p.Event], None],
    ) -> None:
        self._tools = tools
        self._counter = counter
        self._compactor = compactor
        self._items = items
        self._emit = emit

    async def run(self, turn_id: str, call: Item) -> None:
        call_id = str(call.get("call_id", ""))
        display = p.TurnItem(
            id=f"out_{call_id}",
            kind="function_call_output",
            data={"call_id": call_id, "name": call.get("name", "")},
        )
        self._emit(p.ItemStarted(turn_id=turn_id, item=display))
        result = await self._tools().call(
            str(call.get("name", "")), str(call.get("arguments", ""))
        )
        await self._counter.precount([result.output])  # a long output: counted off-thread
        output = self.fit(result.output)
        self._items.append(function_call_output(call_id, output), turn_id)
        self._emit(
            p.ItemCompleted(
                turn_id=turn_id,
                item=display.model_copy(
                    update={"data": {**display.data, "output": result.output, "ok": result.ok}}
                ),
            )
        )

    def fit(self, output: str) -> str:
        """A tool output is cut to what a compacted history can hold beside it (half the
        target), so one large file never leaves a conversation that cannot fit."""
        budget = self._compactor.budget()
        room = budget.history_room
        if room is None:
            return output
        cap = max(TOOL_OUTPUT_FLOOR, room // 2)
        if self._counter.count(output) <= cap:
            return output
        return truncate_text(output, cap, self._counter.count)
