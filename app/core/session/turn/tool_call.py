"""Running a tool call of the model: shown, run, its output fitted to what a compacted history
can hold, and added to the conversation."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from ... import protocol as p
from ...attachments.parts import Part
from ...attachments.parts import display as display_part
from ...config import CoreConfig
from ...items import TOOL_IMAGES, Item, function_call_output
from ...tools.output_fit import certainly_over, fit_output

if TYPE_CHECKING:
    from ...attachments.session_files import SessionAttachments
    from ...compaction.runner import Compactor
    from ...recall import SessionTools
    from ...tokens.counter import TokenCounter
    from ...tools.calls import ToolResult
    from .items import TurnItems

# A tool output is never cut below this many tokens, however small the window.
TOOL_OUTPUT_FLOOR = 256
FIT_OFF_THREAD_CHARS = 200_000  # an output this long is fitted in a worker thread


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
        files: SessionAttachments | None = None,
        config: Callable[[], CoreConfig] | None = None,
    ) -> None:
        self._files = files  # where a tool's images are stored, and whether the model sees them
        self._config = config
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
            str(call.get("name", "")), str(call.get("arguments", "")), call_id
        )
        cap = self.cap()
        if cap is None or not certainly_over(result.output, cap):
            await self._counter.precount([result.output])  # a long output: counted off-thread
        whole, images = await self._images(str(call.get("name", "")), result)
        output = await self.fitted(whole)
        item = self._output_item(call_id, output, images)
        if output is not whole:  # cut: the whole is kept for the user and recall
            await self._items.append_cut_output(
                item, self._output_item(call_id, whole, images), turn_id
            )
        else:
            self._items.append(item, turn_id)
        shown = {**display.data, "output": whole, "ok": result.ok}
        if images and self._files is not None:
            shown["images"] = [display_part(part, self._files.folder) for part in images]
        self._emit(
            p.ItemCompleted(turn_id=turn_id, item=display.model_copy(update={"data": shown}))
        )

    async def _images(self, tool: str, result: ToolResult) -> tuple[str, list[Part]]:
        """The output's text and the parts of the images it returned, stored beside the
        session (those that cannot be sent are said in the text)."""
        if not result.images or self._files is None or self._config is None:
            return result.output, []
        parts, problems = await self._files.tool_images(tool, result.images, self._config())
        notes = [f"[An image the tool returned is not sent: {words}]" for words in problems]
        return "\n".join([result.output, *notes]), parts

    @staticmethod
    def _output_item(call_id: str, output: str, images: list[Part]) -> Item:
        item = function_call_output(call_id, output)
        return {**item, TOOL_IMAGES: images} if images else item

    def cap(self) -> int | None:
        """A tool output's share of the context: what a compacted history can hold beside it
        (half the target), so one large output never leaves a conversation that cannot fit."""
        room = self._compactor.budget().history_room
        return None if room is None else max(TOOL_OUTPUT_FLOOR, room // 2)

    async def fitted(self, output: str) -> str:
        """:meth:`fit`, in a worker thread for a long output: counting the head and tail it
        keeps took 20 ms of the window's thread for a 10 MB output."""
        if len(output) < FIT_OFF_THREAD_CHARS:
            return self.fit(output)
        return await asyncio.to_thread(_fit, output, self.cap(), self._counter.count)

    def fit(self, output: str) -> str:
        """``output`` cut to its share, head and tail kept around a note that says how much
        was left out and that recall reads the rest; the same object when it fits."""
        return _fit(output, self.cap(), self._counter.count)


def _fit(output: str, cap: int | None, count: Callable[[str], int]) -> str:
    """``output`` cut to ``cap`` tokens (None: never cut); the same object when it fits."""
    if cap is None:
        return output
    fitted = fit_output(output, cap, count)
    return output if fitted == output else fitted
