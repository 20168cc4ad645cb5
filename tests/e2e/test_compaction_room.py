"""Compaction always makes room (spec section 9), through the public API against the scripted
server: each rule of the guarantee, and what a user sees when it applies."""

from __future__ import annotations

import json

from app.core import Session, ops
from app.core.compaction.budget import compaction_budget
from app.core.compaction.prompts import summary_prefix
from app.core.tokens.counter import TokenCounter
from app.demo import CompactReply, Fault, Reply, ToolCall
from tests.conftest import collect, input_texts, needs_tiktoken, of_type, run, types

PREFIX = summary_prefix()
WINDOW = 4_096


def usage(total: int) -> dict[str, int]:
    return {"input_tokens": total - 10, "output_tokens": 10, "total_tokens": total}


def words(n: int, word: str = "alpha") -> str:
    return " ".join(f"{word}{i % 97}" for i in range(n))


# After a turn that ended just under the limit (3 650 of 3 686), a message that takes the
# history over it: its turn compacts before it is sent.
INCOMING = "INCOMING " + words(60, "inc")


async def chat(session: Session, server, text: str, answer: str, total: int | None = None):
    server.enqueue(Reply(text=answer, usage=usage(total) if total else None))
    return await run(session, ops.UserTurn(text=text))


def compaction_bodies(server) -> list[dict]:
    """Local compaction requests: no tools, sent explicitly as Codex 0.169.0 does."""
    return [
        r.body
        for r in server.requests_to("responses")
        if r.body.get("tools") == [] and r.body.get("tool_choice") == "auto"
    ]


async def test_the_summary_budget_is_the_output_limit_and_fits_beside_the_prompt(
    server, make_config
):
    session = await Session.open(make_config(context_window=WINDOW, auto_compact=False))
    for i in range(8):  # far more than the window
        await chat(session, server, words(700, f"m{i}x"), "ok")
    server.enqueue(Reply(text="the summary"))
    events = await run(session, ops.Compact())
    body = compaction_bodies(server)[-1]
    limit = body["max_output_tokens"]
    budget = compaction_budget(WINDOW, int(WINDOW * 0.9), 0)
    assert 96 <= limit <= (budget.target or 0)
    # The request was trimmed until the prompt *and* the answer fit the window.
    sent = sum(len(json.dumps(item)) for item in body["input"]) / 4
    assert sent + limit < WINDOW
    assert of_type(events, "context_compacted")[0].trimmed_items > 0
    await session.close()


async def test_a_summary_cut_short_is_retried_once_with_more_room(server, make_config):
    session = await Session.open(make_config(context_window=WINDOW))
    await chat(session, server, words(300), "ok")
    server.enqueue(Reply(text="Your", status="incomplete"))
    server.enqueue(Reply(text="A full summary of what happened, with the decisions made."))
    events = await run(session, ops.Compact())
    first, second = compaction_bodies(server)
    assert second["max_output_tokens"] > first["max_output_tokens"]
    info = of_type(events, "context_compacted")[0]
    assert info.summary.startswith("A full summary") and not info.summary_cut_short
    await session.close()


async def test_a_fragment_never_replaces_a_usable_summary(server, make_config):
    session = await Session.open(make_config(context_window=WINDOW))
    await chat(session, server, "first question", "first answer")
    server.enqueue(Reply(text="EARLIER SUMMARY with the goal and the decisions"))
    await run(session, ops.Compact())
    await chat(session, server, "second question", "second answer")
    server.enqueue(Reply(text="Yo", status="incomplete"))
    server.enqueue(Reply(text="", status="incomplete"))
    events = await run(session, ops.Compact())
    info = of_type(events, "context_compacted")[0]
    assert info.summary_cut_short and info.kept_previous_summary
    summary = input_texts({"input": session.history()})[-1][1]
    assert summary.startswith(PREFIX) and "EARLIER SUMMARY" in summary
    assert any("earlier summary was kept" in w.message for w in of_type(events, "warning"))
    await session.close()


async def test_after_any_compaction_the_history_is_within_half_the_limit(server, make_config):
    session = await Session.open(make_config(context_window=WINDOW))
    for i in range(6):
        await chat(session, server, words(500, f"k{i}y"), "ok")
    # A model that ignores the output limit (3 000 different words: a loop would be junk).
    server.enqueue(Reply(text=" ".join(f"sum{i}" for i in range(3000))))
    events = await run(session, ops.Compact())
    info = of_type(events, "context_compacted")[0]
    assert info.target is not None and info.tokens_after <= info.target <= WINDOW * 0.9 / 2
    assert info.shrunk is not None
    assert session.token_usage().total == info.tokens_after
    await session.close()


async def test_a_compaction_that_frees_little_is_a_warning_with_advice(server, make_config):
    session = await Session.open(make_config(context_window=WINDOW))
    await chat(session, server, "hi", "hello")
    server.enqueue(Reply(text="The user greeted the assistant, who greeted back warmly."))
    events = await run(session, ops.Compact())
    info = of_type(events, "context_compacted")[0]
    assert info.freed_share < 0.2 and info.freed_little
    # Two greetings weigh less than their summary: the warning says the context grew (not
    # "0 % freed") and how to put it back.
    assert info.tokens_after > info.tokens_before
    warnings = [w.message for w in of_type(events, "warning")]
    assert any("made the context larger" in w and "Undo puts it back" in w for w in warnings)
    assert not any("freed little room" in w for w in warnings)
    await session.close()


async def test_no_loop_auto_compaction_waits_for_the_conversation_to_grow_back(
    server, make_config
):
    session = await Session.open(make_config(context_window=WINDOW))
    for total in (600, 1_200, 1_800, 2_400, 3_700):
        await chat(session, server, words(30, f"g{total}z"), "ok", total=total)
    server.enqueue(Reply(text="summary of five turns"))
    server.enqueue(Reply(text="answer six"))
    events = await run(session, ops.UserTurn(text="sixth"))
    assert len(of_type(events, "context_compacted")) == 1
    # The next turns, each reported full-ish but below the limit, never compact.
    for i in range(3):
        events = await chat(session, server, f"short {i}", "ok", total=3_000)
        assert not of_type(events, "context_compacted")
    assert len(compaction_bodies(server)) == 1
    await session.close()


async def test_tool_definitions_count_in_the_estimate(server, make_config, tmp_path):
    plain = await Session.open(make_config(context_window=WINDOW))
    ws = tmp_path / "ws"
    ws.mkdir()
    with_tools = await Session.open(make_config(context_window=WINDOW, workspace=ws))
    assert with_tools.token_usage().total - plain.token_usage().total > 300
    await plain.close()
    await with_tools.close()


async def test_a_message_that_cannot_fit_is_refused_before_sending(server, make_config):
    session = await Session.open(make_config(context_window=WINDOW))
    await chat(session, server, "hello", "hi")
    history = session.history()
    huge = words(6_000)
    events = await run(session, ops.UserTurn(text=huge))
    assert events[-1].status == "failed"
    refused = of_type(events, "message_not_sent")[0]
    assert refused.text == huge and "4,096" in refused.reason
    error = of_type(events, "error")[0]
    assert error.kind == "message_too_large" and "not sent" in error.message
    assert session.history() == history  # nothing added
    assert len(server.requests_to("responses")) == 1  # nothing sent
    events = await chat(session, server, "a normal message", "answered")
    assert events[-1].status == "completed" and events[-1].last_agent_message == "answered"
    await session.close()


async def test_when_overflow_recovery_fails_the_message_leaves_the_models_view(
    server, make_config
):
    config = make_config(context_window=WINDOW)
    session = await Session.open(config)
    await chat(session, server, "hello", "hi")
    server.enqueue(Fault.overflow())
    server.enqueue(Reply(text="a summary"))
    server.enqueue(Fault.overflow())
    events = await run(session, ops.UserTurn(text="the message that does not fit"))
    assert events[-1].status == "failed"
    assert of_type(events, "message_not_sent")[0].text == "the message that does not fit"
    texts = [t for _, t in input_texts({"input": session.history()})]
    assert "the message that does not fit" not in texts
    entry = next(
        e
        for e in session.transcript()
        if e["kind"] == "item" and "does not fit" in json.dumps(e["item"])
    )
    assert entry["not_sent"] is True and entry["in_context"] is False
    events = await chat(session, server, "next message", "works")
    assert events[-1].status == "completed"
    await session.close()
    resumed = await Session.open(config, session_id=session.id)
    assert "the message that does not fit" not in json.dumps(resumed.history())
    await resumed.close()


async def test_the_message_is_shown_before_a_pre_turn_compaction(server, make_config):
    session = await Session.open(make_config(context_window=WINDOW))
    await chat(session, server, "q1", "a1", total=3_650)
    server.enqueue(Reply(text="S"))
    server.enqueue(Reply(text="a2"))
    events = await run(session, ops.UserTurn(text=INCOMING))
    started = [
        (e.item.kind, e.item.data.get("text")) for e in of_type(events, "item_started")
    ]
    assert started[0] == ("user_message", INCOMING)
    assert started[1][0] == "context_compaction"
    follow = server.requests_to("responses")[-1].body
    assert input_texts(follow)[-1] == ("user", INCOMING)
    assert input_texts(follow)[-2] == ("user", f"{PREFIX}\nS")
    assert "INCOMING" not in json.dumps(compaction_bodies(server)[-1])
    # The transcript knows the held-out message is in the model's view.
    entry = next(e for e in session.transcript() if "INCOMING" in json.dumps(e.get("item")))
    assert entry["in_context"] is True
    await session.close()


async def test_a_tool_output_is_cut_to_what_fits(server, make_config, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "big.txt").write_text("\n".join(words(40, f"l{i}q") for i in range(150)))
    session = await Session.open(make_config(context_window=WINDOW, workspace=ws))
    server.enqueue(Reply(function_calls=[ToolCall("read_file", {"path": "big.txt"})]))
    server.enqueue(Reply(text="read it"))
    await run(session, ops.UserTurn(text="read big.txt"))
    output = next(i for i in session.history() if i.get("type") == "function_call_output")
    # Cut around a note saying how much was left out and that recall reads the rest.
    assert "left out" in output["output"] and "recall" in output["output"]
    assert output["output"].startswith("big.txt: lines 1-150")
    assert len(output["output"]) / 4 < WINDOW * 0.9 / 2
    await session.close()


async def test_prune_replaces_old_tool_outputs_without_a_model_call(
    server, make_config, tmp_path
):
    ws = tmp_path / "ws"
    ws.mkdir()
    for name in ("a", "b", "c"):
        (ws / f"{name}.txt").write_text(words(900, name) + "\n")
    config = make_config(context_window=16_000, workspace=ws)
    session = await Session.open(config)
    for name in ("a", "b", "c"):
        server.enqueue(Reply(function_calls=[ToolCall("read_file", {"path": f"{name}.txt"})]))
        server.enqueue(Reply(text=f"read {name}", usage=usage(5_000)))
        await run(session, ops.UserTurn(text=f"read {name}.txt"))
    server.enqueue(Reply(text="fine", usage=usage(14_500)))
    await session.submit(ops.UserTurn(text="thanks"))
    await collect(session, "turn_complete")
    events = await collect(session, "turn_complete")  # over the limit: compacted at once
    info = of_type(events, "context_compacted")[0]
    assert (info.trigger, info.strategy) == ("auto", "prune") and info.pruned_outputs >= 1
    assert not compaction_bodies(server)  # no model call
    stubs = [i["output"] for i in session.history() if i.get("type") == "function_call_output"]
    assert any("Output of read_file removed" in s for s in stubs)
    assert info.tokens_after <= (info.target or 0) + info.incoming_tokens
    # A prune is undoable like any compaction, until the next turn starts.
    await session.submit(ops.UndoCompaction())
    await collect(session, "compaction_undone")
    restored = [i["output"] for i in session.history() if i.get("type") == "function_call_output"]
    assert len(restored) == 3 and not any("Output of read_file removed" in o for o in restored)
    assert all(o.rstrip().endswith(words(900, n)[-20:]) for o, n in zip(restored, "abc"))
    await session.close()


async def test_prune_can_be_turned_off(server, make_config, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text(words(900) + "\n")
    session = await Session.open(
        make_config(context_window=16_000, workspace=ws, prune_tool_outputs=False)
    )
    for _ in range(2):
        server.enqueue(Reply(function_calls=[ToolCall("read_file", {"path": "a.txt"})]))
        server.enqueue(Reply(text="read", usage=usage(6_000)))
        await run(session, ops.UserTurn(text="read a.txt"))
    server.enqueue(Reply(text="ok", usage=usage(14_500)))
    server.enqueue(Reply(text="S"))
    await session.submit(ops.UserTurn(text="thanks"))
    await collect(session, "turn_complete")
    events = await collect(session, "turn_complete")  # over the limit: compacted at once
    assert of_type(events, "context_compacted")[0].strategy == "local"
    await session.close()


async def test_an_automatic_compaction_can_be_undone_until_the_next_turn(server, make_config):
    session = await Session.open(make_config(context_window=WINDOW))
    await chat(session, server, "q1", "a1", total=3_650)
    before = session.history()
    server.enqueue(Reply(text="S"))
    server.enqueue(Reply(text="a2"))
    await run(session, ops.UserTurn(text=INCOMING))  # compacted before it is sent
    await session.submit(ops.UndoCompaction())
    await collect(session, "compaction_undone")
    texts = input_texts({"input": session.history()})
    assert session.history()[: len(before)] == before
    assert texts[len(before) :] == [("user", INCOMING), ("assistant", "a2")]
    await session.close()


async def test_empty_and_cut_replies_say_so(server, make_config):
    config = make_config()
    session = await Session.open(config)
    server.enqueue(Reply(text=""))
    events = await run(session, ops.UserTurn(text="hello"))
    assert any("empty reply" in w.message for w in of_type(events, "warning"))
    server.enqueue(Reply(text="a long answer that", status="incomplete"))
    events = await run(session, ops.UserTurn(text="go on"))
    assert events[-1].status == "completed"
    assert any("output limit" in w.message for w in of_type(events, "warning"))
    assert types(events).index("warning") < types(events).index("turn_complete")
    # Said once a session: a server whose every reply runs to its limit is not a warning
    # every turn; later cut replies get a quiet line, also after the session is reopened.
    server.enqueue(Reply(text="another long answer", status="incomplete"))
    events = await run(session, ops.UserTurn(text="and more"))
    assert not of_type(events, "warning")
    assert any("output limit" in b.message for b in of_type(events, "background"))
    await session.close()
    resumed = await Session.open(config, session_id=session.id)
    server.enqueue(Reply(text="a third long answer", status="incomplete"))
    events = await run(resumed, ops.UserTurn(text="once more"))
    assert not of_type(events, "warning")
    assert any("output limit" in b.message for b in of_type(events, "background"))
    await resumed.close()


async def test_the_long_conversation_warning_is_said_once_a_session(server, make_config):
    config = make_config()
    session = await Session.open(config)
    said = 0
    for i in range(3):
        await chat(session, server, f"q{i}", f"a{i}")
        server.enqueue(Reply(text=f"summary {i}"))
        events = await run(session, ops.Compact())
        said += sum("Heads up" in w.message for w in of_type(events, "warning"))
    assert said == 1
    await session.close()
    resumed = await Session.open(config, session_id=session.id)
    await chat(resumed, server, "again", "ok")
    server.enqueue(Reply(text="summary again"))
    events = await run(resumed, ops.Compact())
    assert not any("Heads up" in w.message for w in of_type(events, "warning"))
    await resumed.close()


async def test_undo_stays_available_after_a_refused_compaction(server, make_config):
    session = await Session.open(make_config())
    await chat(session, server, "q1", "a1")
    server.enqueue(Reply(text="S"))
    events = await run(session, ops.Compact())
    compacted = of_type(events, "context_compacted")[0]
    assert of_type(events, "undo_available")[-1].item_id == compacted.item_id
    events = await run(session, ops.Compact())  # nothing new: refused, as information
    assert not of_type(events, "undo_available")  # nothing changed, nothing to redraw
    await session.submit(ops.UndoCompaction())
    events = await collect(session, "undo_available")
    assert of_type(events, "compaction_undone")[0].item_id == compacted.item_id
    assert events[-1].item_id is None and "already undone" in events[-1].reason
    events = await chat(session, server, "q2", "a2")
    assert of_type(events, "undo_available")[0].item_id is None
    await session.close()


async def test_the_context_view_counts_as_the_gauge_does(server, make_config, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    session = await Session.open(make_config(workspace=ws))
    await chat(session, server, "q1", "a1")
    server.enqueue(Reply(text="S"))
    await run(session, ops.Compact())
    view = session.context_view()
    assert [(e.role, e.is_summary, e.injected) for e in view] == [
        ("user", False, True),  # the environment block, just before the last kept message
        ("user", False, False),
        ("user", True, False),
    ]
    assert view[1].text == "q1"
    usage = session.token_usage()
    assert usage.source == "estimate"
    assert sum(e.tokens for e in view) < usage.total  # plus instructions and tools
    await session.close()


@needs_tiktoken
async def test_a_local_servers_counts_calibrate_the_size_check(server, make_config, tmp_path):
    # A local model whose tokenizer counts three times what Coco does (the ratio's ceiling).
    # (Automatic compaction off: the warm-up's reported 100 000 tokens would compact at once.)
    config = make_config(wire_api="chat", context_window=WINDOW, auto_compact=False)
    message = words(900, "cal")  # about 2 000 of Coco's tokens: fits a 4k window by its count
    fresh = await Session.open(make_config(wire_api="chat", context_window=WINDOW,
                                           data_dir=tmp_path / "fresh"))
    server.enqueue(Reply(text="ok"), endpoint="chat")
    events = await run(fresh, ops.UserTurn(text=message))
    assert events[-1].status == "completed"  # uncalibrated, it is sent
    await fresh.close()

    # Calibration learns from exact counts only: have the tokenizer loaded first (it loads in
    # the background, shared by every counter of the process).
    from tests.conftest import TIKTOKEN_CACHE

    assert TokenCounter(config.model, TIKTOKEN_CACHE, allow_download=False).wait_ready(30)
    session = await Session.open(config)
    server.enqueue(
        Reply(text="noted", usage={"input_tokens": 100_000, "output_tokens": 5,
                                   "total_tokens": 100_005}),
        endpoint="chat",
    )
    await run(session, ops.UserTurn(text=words(100, "warm")))
    events = await run(session, ops.UserTurn(text=message))
    refused = of_type(events, "message_not_sent")
    assert refused and refused[0].text == message  # by the server's count it cannot fit
    await session.close()
    # Remembered for the provider and model, across sessions.
    again = await Session.open(config)
    events = await run(again, ops.UserTurn(text=message))
    assert of_type(events, "message_not_sent")
    await again.close()


async def test_when_nothing_is_left_to_trim_the_context_is_marked_full(server, make_config):
    session = await Session.open(make_config(context_window=WINDOW, max_retries=0))
    await chat(session, server, "only message", "only answer")
    for _ in range(8):  # the server says every compaction request overflows
        server.enqueue(Fault.overflow())
    events = await run(session, ops.Compact())
    assert "Could not compact" in of_type(events, "error")[0].message
    assert of_type(events, "token_count")[-1].total == WINDOW  # usage marked full
    await session.close()


async def test_remote_compaction_trims_trailing_tool_outputs_to_fit(
    server, make_config, tmp_path
):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "big.txt").write_text("\n".join(words(40, f"r{i}x") for i in range(150)))
    session = await Session.open(
        make_config(context_window=WINDOW, workspace=ws, remote_compaction=True,
                    auto_compact=False)
    )
    for i in range(5):  # far more than the window, with automatic compaction off
        await chat(session, server, words(600, f"h{i}y"), "ok")
    server.enqueue(Reply(function_calls=[ToolCall("read_file", {"path": "big.txt"})]))
    server.enqueue(Fault.overflow())  # the follow-up does not fit: the output stays last
    await run(session, ops.UserTurn(text="read big.txt"))
    assert session.history()[-1]["type"] == "function_call_output"
    server.enqueue(Fault.status(404, "no trigger form"))
    server.enqueue(CompactReply(encrypted_content="ENC"), endpoint="compact")
    await run(session, ops.Compact())
    body = server.requests_to("compact")[-1].body
    kinds = [item.get("type") for item in body["input"]]
    assert kinds[-1] == "function_call"  # the output past the window was trimmed off the end
    assert "function_call_output" not in kinds
    await session.close()


async def test_a_call_interrupted_before_it_ran_gets_an_output(server, make_config, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\n")
    session = await Session.open(make_config(workspace=ws))
    server.enqueue(
        Reply(
            function_calls=[
                ToolCall("read_file", {"path": "a.txt"}, call_id="call_done"),
                ToolCall("read_file", {"path": "b.txt"}, call_id="call_never"),
            ],
            pause_after_items=1,  # the first call is complete, the reply is not: Stop lands here
        )
    )
    await session.submit(ops.UserTurn(text="read a.txt twice"))
    # The first call has reached the core (it is shown as soon as it is made), the reply not.
    while True:
        started = await collect(session, "item_started")
        if started[-1].item.kind == "function_call":
            break
    await session.submit(ops.Interrupt())
    events = await collect(session, "turn_complete")
    assert events[-1].status == "aborted"
    history = session.history()
    calls = [i["call_id"] for i in history if i.get("type") == "function_call"]
    outputs = {i["call_id"]: i["output"] for i in history if i.get("type") == "function_call_output"}
    assert calls == ["call_done"]  # the call that had arrived is kept...
    assert set(calls) == set(outputs)  # ...with an output: no call is left without one
    for call_id in calls:
        assert "Interrupted" in outputs[call_id]
    await session.close()
