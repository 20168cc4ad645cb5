"""Running the model's tool calls (``app.core.session.turn.tool_call``): shown as they start and end, the
output the model gets cut to what a compacted history can hold beside it, the full one shown."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from app.core import protocol as p
from app.core.compaction.budget import compaction_budget
from app.core.items import Item, function_call, function_call_output
from app.core.session.turn.tool_call import TOOL_OUTPUT_FLOOR, ToolCalls
from app.core.tokens.counter import TokenCounter
from app.core.tools.workspace import ToolResult


class Tools:
    def __init__(self, output: str) -> None:
        self.output = output
        self.calls: list[tuple[str, str]] = []

    async def call(self, name: str, arguments: str, call_id: str = "") -> ToolResult:
        self.calls.append((name, arguments))
        return ToolResult(self.output, ok=True)


class Compactor:
    """The compactor's budget: ``room`` is what a compacted history may hold."""

    def __init__(self, room: int | None) -> None:
        self.room = room

    def budget(self) -> Any:
        return SimpleNamespace(history_room=self.room)


class Items:
    def __init__(self) -> None:
        self.appended: list[tuple[Item, str]] = []
        self.wholes: list[Item] = []

    def append(self, item: Item, turn_id: str) -> None:
        self.appended.append((item, turn_id))

    async def append_cut_output(self, item: Item, whole: Item, turn_id: str) -> None:
        self.appended.append((item, turn_id))
        self.wholes.append(whole)


def tool_calls(output: str, room: int | None) -> tuple[ToolCalls, Items, list[p.Event]]:
    items, events = Items(), []
    calls = ToolCalls(
        tools=lambda: Tools(output),  # type: ignore[arg-type,return-value]
        counter=TokenCounter("gpt-4o", allow_download=False),
        compactor=Compactor(room),  # type: ignore[arg-type]
        items=items,  # type: ignore[arg-type]
        emit=events.append,  # type: ignore[arg-type]
    )
    return calls, items, events  # type: ignore[return-value]


async def test_a_call_is_shown_run_and_its_output_added() -> None:
    calls, items, events = tool_calls("file contents", room=None)
    await calls.run("t1", function_call("read_file", '{"path": "a"}', "c7"))
    started, completed = events
    assert isinstance(started, p.ItemStarted) and started.item.id == "out_c7"
    assert isinstance(completed, p.ItemCompleted)
    assert completed.item.data == {
        "call_id": "c7", "name": "read_file", "output": "file contents", "ok": True
    }
    ((item, turn_id),) = items.appended
    assert (item["type"], item["call_id"], item["output"], turn_id) == (
        "function_call_output", "c7", "file contents", "t1"
    )


async def test_a_large_output_is_cut_for_the_model_and_shown_whole() -> None:
    big = "line of a large file\n" * 5000
    room = compaction_budget(8000, 7200, 0).history_room or 0
    calls, items, events = tool_calls(big, room=room)
    await calls.run("t1", function_call("read_file", "{}", "c1"))
    sent = items.appended[0][0]["output"]
    counter = TokenCounter("gpt-4o", allow_download=False)
    assert counter.count(sent) <= max(TOOL_OUTPUT_FLOOR, room // 2) < counter.count(big)
    assert events[-1].item.data["output"] == big  # type: ignore[union-attr]
    assert items.wholes == [function_call_output("c1", big)]  # kept whole for recall
    assert "left out" in sent and "recall" in sent
    assert sent.startswith("line of a large file") and sent.endswith("line of a large file\n")


def test_an_output_is_never_cut_below_the_floor_nor_without_a_window() -> None:
    text = "word " * 2000
    unknown, _, _ = tool_calls(text, room=None)
    assert unknown.fit(text) == text
    tiny, _, _ = tool_calls(text, room=40)  # half the room is far below the floor
    counter = TokenCounter("gpt-4o", allow_download=False)
    cut = tiny.fit(text)
    assert cut != text
    assert TOOL_OUTPUT_FLOOR // 2 < counter.count(cut) <= TOOL_OUTPUT_FLOOR, counter.count(cut)


async def test_a_long_output_is_fitted_in_a_worker_with_the_same_result(monkeypatch) -> None:
    import threading

    from app.core.session.turn import tool_call

    big = "a line of a long log, with words in it\n" * 6000  # over FIT_OFF_THREAD_CHARS
    assert len(big) >= tool_call.FIT_OFF_THREAD_CHARS
    threads: list[str] = []
    fit_output = tool_call.fit_output

    def spied(*args: object) -> str:
        threads.append(threading.current_thread().name)
        return fit_output(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(tool_call, "fit_output", spied)
    calls, items, _events = tool_calls(big, room=4000)
    await calls.run("t1", function_call("read_file", "{}", "c1"))
    assert threads and threads[0] != threading.main_thread().name
    assert items.appended[0][0]["output"] == calls.fit(big) != big  # as fitted on the thread
    assert items.wholes[0]["output"] == big
