"""The sampling loop's steps (``SamplingLoop``), each collaborator a fake that writes what it
is asked into one log: what is shown while a reply streams and once it is done, the figures
handed on, the tool rounds and the compaction between them, the overflow's one
compact-and-retry, and every way a turn fails. The end-to-end behaviour (a real session on the
scripted server) is ``test_loop.py``'s."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

import pytest

from app.core import protocol as p
from app.core.config import CoreConfig
from app.core.items import Item, assistant_message, function_call
from app.core.providers import sampling
from app.core.providers.base import ModelRequest, ProviderError, TextDelta
from app.core.providers.sampling import StreamAttempt
from app.core.session.replay import function_call_display
from app.core.session.turn import TurnFailed
from app.core.session.turn.loop import (
    MAX_TOOL_ROUNDS,
    OVERFLOW_AUTO_OFF,
    OVERFLOW_RECOVERY_FAILED,
    SamplingLoop,
)
from tests.core.compaction.compaction_fakes import USAGE, ScriptedProvider

TURN = "turn_9"
ESTIMATE = 1_234
Log = list[tuple[Any, ...]]


class History:
    def __init__(self, log: Log) -> None:
        self.log = log

    async def count_deferred(self) -> None:
        self.log.append(("count_deferred",))

    def estimate(self) -> int:
        return ESTIMATE

    def mark_full(self, window: int) -> None:
        self.log.append(("mark_full", window))


class Counter:
    def __init__(self, log: Log) -> None:
        self.log = log

    async def precount_items(self, items: list[Item]) -> None:
        self.log.append(("precount", list(items)))


class Compactor:
    def __init__(self, log: Log, succeeds: bool = True) -> None:
        self.log = log
        self.succeeds = succeeds
        self.unchanged_since_compaction = False
        self.post_compaction_usage: int | None = None

    async def run(self, turn_id: str, trigger: str, **options: Any) -> bool:
        self.log.append(("compact", turn_id, trigger, options))
        return self.succeeds

    def apply_server_compaction(self, turn_id: str, item: Item) -> None:
        self.log.append(("server_compaction", turn_id, item))


class Meter:
    def __init__(self, log: Log, usage: int = 100, limit: int | None = 1_000) -> None:
        self.log = log
        self.used = usage
        self.limit_ = limit
        self.window_: int | None = 2_000

    def learn(self, estimate: int, attempt: StreamAttempt) -> None:
        self.log.append(("learn", estimate, attempt.usage))

    def usage(self) -> int:
        return self.used

    def limit(self) -> int | None:
        return self.limit_

    def window(self) -> int | None:
        return self.window_

    def reported(self, usage: Any) -> None:
        self.log.append(("reported", usage))

    def emit_usage(self) -> None:
        self.log.append(("emit_usage",))


class Notices:
    def __init__(self, log: Log) -> None:
        self.log = log

    def retry_notice(self, turn_id: str) -> Any:
        return lambda attempt, most, error: self.log.append(("retry", turn_id, attempt))

    def stall_notice(self, turn_id: str) -> Any:
        return lambda seconds: self.log.append(("stall", turn_id, seconds is not None))

    def error_with_details(self, message: str, kind: str, turn_id: str, details: str) -> None:
        self.log.append(("error", message, kind, turn_id, details))

    def error(self, message: str, kind: str, turn_id: str | None = None) -> None:
        self.log.append(("error", message, kind, turn_id))

    def about_reply(self, turn_id: str, reply: str | None, attempt: StreamAttempt) -> None:
        self.log.append(("about_reply", turn_id, reply))


class Items:
    def __init__(self, log: Log) -> None:
        self.log = log

    def append(self, item: Item, turn_id: str) -> None:
        self.log.append(("append", item, turn_id))

    def withdraw(self, turn_id: str, text: str, reason: str) -> None:
        self.log.append(("withdraw", turn_id, text, reason))


class Requests:
    def __init__(self, log: Log, client_compacts: bool = True) -> None:
        self.log = log
        self.compacts = client_compacts

    def build(self, *, turn: bool) -> ModelRequest:
        self.log.append(("build", turn))
        return ModelRequest(model="m", instructions="", input=[])

    def client_compacts(self) -> bool:
        return self.compacts


class ToolCalls:
    def __init__(self, log: Log) -> None:
        self.log = log

    async def run(self, turn_id: str, call: Item) -> None:
        self.log.append(("tool", turn_id, call["call_id"]))


class Events:
    def __init__(self, log: Log) -> None:
        self.log = log

    def put_delta(self, turn_id: str, item_id: str, delta: str) -> None:
        self.log.append(("delta", turn_id, item_id, delta))


class Loop:
    """A loop over fakes, and what they were asked, in order (events as ``("emit", event)``)."""

    def __init__(
        self, tmp_path: Path, provider: ScriptedProvider, *, auto_compact: bool = True
    ) -> None:
        self.log: Log = []
        self.provider = provider
        self.config = CoreConfig(
            data_dir=tmp_path, max_retries=1, retry_base_delay=0.0, auto_compact=auto_compact
        )
        self.compactor = Compactor(self.log)
        self.meter = Meter(self.log)
        self.requests = Requests(self.log)
        self.notices = Notices(self.log)
        self.loop = SamplingLoop(
            config=lambda: self.config,
            provider=lambda: provider,
            history=cast(Any, History(self.log)),
            counter=cast(Any, Counter(self.log)),
            compactor=cast(Any, self.compactor),
            meter=cast(Any, self.meter),
            notices=cast(Any, self.notices),
            items=cast(Any, Items(self.log)),
            requests=cast(Any, self.requests),
            tool_calls=cast(Any, ToolCalls(self.log)),
            events=cast(Any, Events(self.log)),
            emit=lambda event: self.log.append(("emit", event)),
        )
        self.box: list[StreamAttempt] = []

    async def run(self, text: str = "hello") -> str | None:
        return await self.loop.run(TURN, text, self.box)

    def named(self, *names: str) -> Log:
        return [entry for entry in self.log if entry[0] in names]

    def emitted(self, kind: type | None = None) -> list[Any]:
        return [
            e[1] for e in self.log if e[0] == "emit" and (kind is None or isinstance(e[1], kind))
        ]


def answer(text: str, item_id: str = "msg_1") -> Item:
    return {**assistant_message(text), "id": item_id}


def call(call_id: str, item_id: str | None = None) -> Item:
    item = function_call("read_file", '{"path": "a"}', call_id)
    if item_id is not None:
        item["id"] = item_id
    return item


def overflow() -> ProviderError:
    return ProviderError("context_overflow", "too long for the window", status=400)


async def test_a_streamed_answer_is_shown_once_started_then_completed_and_handed_on(
    tmp_path: Path,
) -> None:
    reply = answer("It is alpha.")
    loop = Loop(tmp_path, ScriptedProvider(streams=[[reply]], deltas=True))
    assert await loop.run() == "It is alpha."
    started = p.ItemStarted(turn_id=TURN, item=p.TurnItem(id="msg_1", kind="agent_message"))
    completed = p.ItemCompleted(
        turn_id=TURN,
        item=p.TurnItem(id="msg_1", kind="agent_message", data={"text": "It is alpha."}),
    )
    assert loop.emitted() == [
        started,
        completed,
        p.AgentMessage(turn_id=TURN, item_id="msg_1", text="It is alpha."),
    ]
    assert loop.log == [
        ("count_deferred",),
        ("build", True),
        ("emit", started),
        ("delta", TURN, "msg_1", "It is alpha."),
        ("precount", [reply]),
        ("learn", ESTIMATE, USAGE),
        ("append", reply, TURN),
        ("emit", completed),
        ("emit", loop.emitted()[2]),
        ("reported", USAGE),
        ("emit_usage",),
        ("about_reply", TURN, "It is alpha."),
    ]
    assert loop.box == []  # the attempt under way is let go once recorded


async def test_an_item_streamed_in_several_deltas_is_started_once(tmp_path: Path) -> None:
    class TwoDeltas(ScriptedProvider):
        async def _events(self, answer: Any, stop: Any) -> Any:
            yield TextDelta("msg_1", "It is ")
            yield TextDelta("msg_1", "alpha.")
            yield TextDelta("msg_2", "And more.")
            async for event in super()._events(answer, stop):
                yield event

    loop = Loop(
        tmp_path, TwoDeltas(streams=[[answer("It is alpha."), answer("And more.", "msg_2")]])
    )
    await loop.run()
    started = [e.item.id for e in loop.emitted(p.ItemStarted)]
    assert started == ["msg_1", "msg_2"]
    assert loop.named("delta") == [
        ("delta", TURN, "msg_1", "It is "),
        ("delta", TURN, "msg_1", "alpha."),
        ("delta", TURN, "msg_2", "And more."),
    ]


async def test_a_message_that_did_not_stream_is_started_when_done(tmp_path: Path) -> None:
    reply = assistant_message("Done.")  # no id: one is made for it
    loop = Loop(tmp_path, ScriptedProvider(streams=[[reply]]))
    await loop.run()
    started, completed = loop.emitted(p.ItemStarted), loop.emitted(p.ItemCompleted)
    assert len(started) == 1 and started[0].item.id.startswith("item_")
    assert completed[0].item.id == started[0].item.id


async def test_tool_calls_are_shown_as_made_run_and_sampled_again(tmp_path: Path) -> None:
    first = [answer("Reading it.", "msg_0"), call("c1", "fc_1")]
    loop = Loop(tmp_path, ScriptedProvider(streams=[first, [{"type": "reasoning", "summary": []}]]))
    assert await loop.run() == "Reading it."  # the last text said, the final round having none
    display = function_call_display("fc_1", first[1])
    # Shown as soon as the model made it, before the reply was recorded; completed after.
    shown = loop.log.index(("emit", p.ItemStarted(turn_id=TURN, item=display)))
    assert shown < loop.log.index(("precount", first))
    assert loop.log.index(("emit", p.ItemCompleted(turn_id=TURN, item=display))) > shown
    assert loop.named("tool", "build") == [("build", True), ("tool", TURN, "c1"), ("build", True)]
    assert loop.named("about_reply") == [("about_reply", TURN, None)]


async def test_a_call_is_shown_under_its_id_else_its_call_id_else_a_new_one(
    tmp_path: Path,
) -> None:
    calls = [call("c1", "fc_1"), call("c2"), {**call(""), "call_id": ""}]
    loop = Loop(tmp_path, ScriptedProvider(streams=[calls, [answer("ok")]]))
    await loop.run()
    ids = [e.item.id for e in loop.emitted(p.ItemStarted) if e.item.kind == "function_call"]
    assert ids[:2] == ["fc_1", "c2"] and ids[2].startswith("fc_") and len(ids[2]) > 3


async def test_a_reply_without_text_ends_the_turn_with_none(tmp_path: Path) -> None:
    loop = Loop(tmp_path, ScriptedProvider(streams=[[{"type": "reasoning", "summary": []}]]))
    assert await loop.run() is None


async def test_reasoning_is_shown_with_its_summary(tmp_path: Path) -> None:
    reasoning = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "Weighing"}, {"text": "it."}],
    }
    loop = Loop(tmp_path, ScriptedProvider(streams=[[reasoning, answer("ok")]]))
    await loop.run()
    assert loop.emitted(p.ItemCompleted)[0] == p.ItemCompleted(
        turn_id=TURN,
        item=p.TurnItem(id="rs_1", kind="reasoning", data={"summary": "Weighing it."}),
    )


async def test_a_compaction_inside_the_response_is_applied_and_its_usage_not_reported(
    tmp_path: Path,
) -> None:
    compaction = {"type": "compaction", "encrypted_content": "x"}
    loop = Loop(tmp_path, ScriptedProvider(streams=[[compaction, answer("ok")]]))
    await loop.run()
    assert loop.named("server_compaction") == [("server_compaction", TURN, compaction)]
    assert [entry[1] for entry in loop.named("append")] == [answer("ok")]
    assert loop.named("reported") == [] and loop.named("emit_usage") == [("emit_usage",)]


@pytest.mark.parametrize(
    ("usage", "unchanged", "post", "compacts"),
    [
        (999, False, None, False),  # under the limit
        (1_000, False, None, True),  # at it
        (1_000, True, None, False),  # nothing new since the last compaction
        (1_400, False, 1_100, False),  # not grown half a limit past what it could not shrink
        (1_600, False, 1_100, True),
    ],
)
async def test_between_tool_rounds_the_loop_compacts_when_the_rule_says(
    tmp_path: Path, usage: int, unchanged: bool, post: int | None, compacts: bool
) -> None:
    loop = Loop(tmp_path, ScriptedProvider(streams=[[call("c1")], [answer("ok")]]))
    loop.meter.used = usage
    loop.compactor.unchanged_since_compaction = unchanged
    loop.compactor.post_compaction_usage = post
    await loop.run()
    assert loop.named("compact") == ([("compact", TURN, "auto", {})] if compacts else [])


@pytest.mark.parametrize(("client", "limit"), [(False, 1_000), (True, None)])
async def test_no_compaction_between_rounds_when_the_server_compacts_or_no_limit_is_known(
    tmp_path: Path, client: bool, limit: int | None
) -> None:
    loop = Loop(tmp_path, ScriptedProvider(streams=[[call("c1")], [answer("ok")]]))
    loop.meter.used, loop.meter.limit_, loop.requests.compacts = 5_000, limit, client
    await loop.run()
    assert loop.named("compact") == []


async def test_a_round_limit_ends_a_turn_that_never_answers(tmp_path: Path) -> None:
    rounds = [[call(f"c{n}")] for n in range(MAX_TOOL_ROUNDS)]
    loop = Loop(tmp_path, ScriptedProvider(streams=rounds))
    with pytest.raises(TurnFailed):
        await loop.run()
    assert len(loop.provider.requests) == MAX_TOOL_ROUNDS
    assert loop.named("error") == [
        (
            "error",
            f"Stopped after {MAX_TOOL_ROUNDS} tool rounds without a final answer.",
            "tool",
            TURN,
        )
    ]


async def test_a_failed_request_ends_the_turn_with_its_words_kind_and_details(
    tmp_path: Path,
) -> None:
    error = ProviderError("not_found", "no such model", status=404, details="HTTP 404 raw")
    loop = Loop(tmp_path, ScriptedProvider(streams=[error]))
    with pytest.raises(TurnFailed):
        await loop.run()
    assert loop.named("error") == [("error", "no such model", "not_found", TURN, "HTTP 404 raw")]


async def test_a_retried_request_is_announced_for_the_turn(tmp_path: Path) -> None:
    busy = ProviderError("server", "busy", status=503)
    loop = Loop(tmp_path, ScriptedProvider(streams=[busy, [answer("ok")]]))
    assert await loop.run() == "ok"
    assert loop.named("retry") == [("retry", TURN, 1)]


async def test_a_silent_server_is_announced_for_the_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No notice delay: the stream waits for the notice itself, so nothing depends on time.
    monkeypatch.setattr(sampling, "STALL_NOTICE_SECONDS", 0.0)
    noticed = asyncio.Event()

    class Silent(ScriptedProvider):
        async def _events(self, answer: Any, stop: Any) -> Any:
            await noticed.wait()
            async for event in super()._events(answer, stop):
                yield event

    loop = Loop(tmp_path, Silent(streams=[[answer("ok")]]))
    notices = loop.notices
    stall = notices.stall_notice

    def stall_notice(turn_id: str) -> Any:
        inner = stall(turn_id)

        def notice(seconds: float | None) -> None:
            inner(seconds)
            noticed.set()

        return notice

    notices.stall_notice = stall_notice  # type: ignore[method-assign]
    assert await loop.run() == "ok"
    assert loop.named("stall")[0] == ("stall", TURN, True)


async def test_an_overflow_on_the_first_request_compacts_without_the_new_message_and_retries(
    tmp_path: Path,
) -> None:
    loop = Loop(tmp_path, ScriptedProvider(streams=[overflow(), [answer("ok")]]))
    assert await loop.run() == "ok"
    assert loop.named("mark_full", "compact", "build") == [
        ("build", True),
        ("mark_full", 2_000),
        ("compact", TURN, "overflow", {"force": True, "held_out": 1}),
        ("build", True),
    ]


async def test_an_overflow_after_a_tool_round_compacts_everything(tmp_path: Path) -> None:
    loop = Loop(tmp_path, ScriptedProvider(streams=[[call("c1")], overflow(), [answer("ok")]]))
    assert await loop.run() == "ok"
    assert loop.named("compact") == [("compact", TURN, "overflow", {"force": True, "held_out": 0})]


async def test_an_overflow_with_no_window_known_marks_nothing_full(tmp_path: Path) -> None:
    loop = Loop(tmp_path, ScriptedProvider(streams=[overflow(), [answer("ok")]]))
    loop.meter.window_ = None
    await loop.run()
    assert loop.named("mark_full") == [] and len(loop.named("compact")) == 1


async def test_a_second_overflow_gives_up_and_withdraws_the_message(tmp_path: Path) -> None:
    loop = Loop(tmp_path, ScriptedProvider(streams=[overflow(), [call("c1")], overflow()]))
    with pytest.raises(TurnFailed):
        await loop.run("the message")
    details = "category: context_overflow\nHTTP status: 400\nmessage: too long for the window"
    assert loop.named("error", "withdraw", "compact") == [
        ("compact", TURN, "overflow", {"force": True, "held_out": 1}),
        ("error", OVERFLOW_RECOVERY_FAILED, "context_overflow", TURN, details),
        ("withdraw", TURN, "the message", OVERFLOW_RECOVERY_FAILED),
    ]


async def test_an_overflow_with_automatic_compaction_off_fails_without_compacting(
    tmp_path: Path,
) -> None:
    loop = Loop(tmp_path, ScriptedProvider(streams=[overflow()]), auto_compact=False)
    with pytest.raises(TurnFailed):
        await loop.run()
    (error,) = loop.named("error")
    assert error[1:4] == (OVERFLOW_AUTO_OFF, "context_overflow", TURN)
    assert loop.named("compact", "withdraw") == []


async def test_an_overflow_whose_compaction_fails_withdraws_the_message(tmp_path: Path) -> None:
    loop = Loop(tmp_path, ScriptedProvider(streams=[overflow()]))
    loop.compactor.succeeds = False
    with pytest.raises(TurnFailed):
        await loop.run("the message")
    assert loop.named("withdraw") == [("withdraw", TURN, "the message", OVERFLOW_RECOVERY_FAILED)]
    assert loop.named("error") == []  # the compaction said why it failed


async def test_only_the_assistant_s_messages_are_shown_as_its_answer(tmp_path: Path) -> None:
    # A server that echoes a message of another role: recorded as it came, never shown as
    # the model's words.
    echoed = {
        "type": "message",
        "role": "user",
        "id": "msg_u",
        "content": [{"type": "input_text", "text": "an echo"}],
    }
    loop = Loop(tmp_path, ScriptedProvider(streams=[[echoed, answer("ok")]]))
    await loop.run()
    assert [entry[1] for entry in loop.named("append")] == [echoed, answer("ok")]
    assert [e.item_id for e in loop.emitted(p.AgentMessage)] == ["msg_1"]
