"""Running the model's tool calls (``app.core.session.turn.tool_call``): shown as they start and end, the
output the model gets cut to what a compacted history can hold beside it, the full one shown."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from app.core import protocol as p
from app.core.compaction.budget import compaction_budget
from app.core.items import Item, function_call, function_call_output
from app.core.session.turn.tool_call import TOOL_OUTPUT_FLOOR, ToolCalls
from app.core.tokens.counter import TokenCounter
from app.core.tools.workspace import ToolResult


class Tools:
    def __init__(self, output: str, images: tuple[tuple[str, bytes], ...] = ()) -> None:
        self.output = output
        self.images = images
        self.calls: list[tuple[str, str]] = []
        self.call_ids: list[str] = []

    async def call(self, name: str, arguments: str, call_id: str = "") -> ToolResult:
        self.calls.append((name, arguments))
        self.call_ids.append(call_id)
        return ToolResult(self.output, ok=True, images=self.images)


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


def tool_calls(
    output: str, room: int | None, tools: Tools | None = None, files: Any = None,
    config: Any = None,
) -> tuple[ToolCalls, Items, list[p.Event]]:
    items, events = Items(), []
    used = tools or Tools(output)
    calls = ToolCalls(
        tools=lambda: used,  # type: ignore[arg-type,return-value]
        counter=TokenCounter("gpt-4o", allow_download=False),
        compactor=Compactor(room),  # type: ignore[arg-type]
        items=items,  # type: ignore[arg-type]
        emit=events.append,  # type: ignore[arg-type]
        files=files,
        config=config,
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
    assert items.appended[0][1] == "t1"  # under its turn
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


async def test_a_call_missing_its_fields_is_run_with_empty_ones() -> None:
    tools = Tools("no such tool")
    calls, items, events = tool_calls("", room=None, tools=tools)
    await calls.run("t1", {"type": "function_call"})
    assert tools.calls == [("", "")] and tools.call_ids == [""]
    started, completed = events
    assert isinstance(started, p.ItemStarted) and started.item.id == "out_"
    assert started.item.data == {"call_id": "", "name": ""}
    assert isinstance(completed, p.ItemCompleted) and completed.item.data["name"] == ""
    assert items.appended[0][0]["call_id"] == ""


async def test_the_call_id_goes_to_the_tool() -> None:
    tools = Tools("ok")
    calls, _items, _events = tool_calls("", room=None, tools=tools)
    await calls.run("t1", function_call("read_file", '{"path": "a"}', "c9"))
    assert tools.call_ids == ["c9"]


def test_an_outputs_share_is_half_the_room_a_compacted_history_has() -> None:
    assert tool_calls("", room=10_000)[0].cap() == 5_000
    assert tool_calls("", room=None)[0].cap() is None


async def test_an_output_far_over_its_share_is_not_counted_ahead(monkeypatch) -> None:
    from app.core.tools.output_fit import certainly_over

    counted: list[list[str]] = []

    async def precount(texts: list[str], *args: object, **kwargs: object) -> None:
        counted.append(list(texts))

    big, small = "x" * 200_000, "a short output"
    for output, ahead in ((big, []), (small, [[small]])):
        calls, _items, _events = tool_calls(output, room=2_000)
        monkeypatch.setattr(calls._counter, "precount", precount)
        counted.clear()
        await calls.run("t1", function_call("read_file", "{}", "c1"))
        assert certainly_over(output, calls.cap() or 0) is (output is big)
        assert counted == ahead


async def test_an_output_is_fitted_in_a_worker_from_the_limit_on(monkeypatch) -> None:
    import threading

    from app.core.session.turn import tool_call

    threads: list[bool] = []
    fit_output = tool_call.fit_output

    def spied(*args: object) -> str:
        threads.append(threading.current_thread() is threading.main_thread())
        return fit_output(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(tool_call, "fit_output", spied)
    calls, _items, _events = tool_calls("", room=400_000)
    for length in (tool_call.FIT_OFF_THREAD_CHARS - 1, tool_call.FIT_OFF_THREAD_CHARS):
        await calls.fitted("y" * length)
    assert threads == [True, False]  # on the loop's thread just below it, in a worker at it


class Files:
    """The session's files as a tool's images meet them: stored as ``parts``, ``problems``
    said of those that cannot be sent."""

    def __init__(self, folder: Path, parts: list[dict[str, Any]], problems: list[str]) -> None:
        self.folder, self.parts, self.problems = folder, parts, problems
        self.asked: list[tuple[str, object]] = []

    async def tool_images(self, tool: str, images: object, config: object) -> Any:
        self.asked.append((tool, images))
        return self.parts, self.problems


PNG = (("image/png", b"\x89PNG"),)
STORED = {"type": "coco_attachment", "kind": "image", "name": "shot.png", "file": "ab.png"}


async def test_a_tools_images_are_stored_sent_and_shown(tmp_path: Path) -> None:
    files = Files(tmp_path, [STORED], ["too large"])
    tools = Tools("a screenshot", images=PNG)
    calls, items, events = tool_calls(
        "", room=None, tools=tools, files=files, config=lambda: "config"
    )
    await calls.run("t1", function_call("screenshot", "{}", "c1"))
    assert files.asked == [("screenshot", PNG)]
    item = items.appended[0][0]
    assert item["output"] == "a screenshot\n[An image the tool returned is not sent: too large]"
    assert item["coco_images"] == [STORED]
    shown = events[-1].item.data  # type: ignore[union-attr]
    assert [image["name"] for image in shown["images"]] == ["shot.png"]


async def test_a_cut_output_keeps_its_images_whole(tmp_path: Path) -> None:
    files = Files(tmp_path, [STORED], [])
    tools = Tools("line of a large log\n" * 5000, images=PNG)
    calls, items, _events = tool_calls("", room=2_000, tools=tools, files=files,
                                       config=lambda: "config")
    await calls.run("t1", function_call("screenshot", "{}", "c1"))
    assert items.wholes[0]["coco_images"] == [STORED]


@pytest.mark.parametrize("with_files", [True, False])
async def test_images_without_files_or_settings_to_store_them_are_left_out(
    tmp_path: Path, with_files: bool
) -> None:
    files = Files(tmp_path, [STORED], [])
    calls, items, events = tool_calls(
        "", room=None, tools=Tools("text", images=PNG),
        files=files if with_files else None, config=None if with_files else (lambda: "c"),
    )
    await calls.run("t1", function_call("screenshot", "{}", "c1"))
    assert files.asked == [] and items.appended[0][0] == function_call_output("c1", "text")
    assert "images" not in events[-1].item.data  # type: ignore[union-attr]


async def test_a_call_with_no_images_shows_none(tmp_path: Path) -> None:
    files = Files(tmp_path, [STORED], [])
    calls, _items, events = tool_calls(
        "", room=None, tools=Tools("text"), files=files, config=lambda: "c"
    )
    await calls.run("t1", function_call("read_file", "{}", "c1"))
    assert files.asked == [] and "images" not in events[-1].item.data  # type: ignore[union-attr]
