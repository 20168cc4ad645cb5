"""Compaction end to end (spec sections 2-6), each scenario its own test.

Every test drives the public API against the scripted server and asserts the request bodies
the server recorded and the events the session emitted.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from app.core import Session, ops
from app.core.compaction.prompts import default_prompt, summary_prefix
from app.demo import CompactReply, Fault, Reply, ToolCall
from tests.conftest import collect, input_texts, of_type, run, types

PREFIX = summary_prefix()


def trigger_unsupported(server) -> None:
    """The server refuses the trigger form (as one without it does): the standalone endpoint
    is tried next, and the refusal is remembered."""
    server.enqueue(
        Fault.status(400, "Invalid value: 'compaction_trigger'. Supported values are: 'message'.")
    )


# A message of about 50 tokens: sent after a turn that ended just under the limit (880 of
# 900), it takes the history over it, so that turn compacts before it is sent (a turn that
# ends over the limit compacts at once instead: test_compact_after_turn).
PUSH = " and more" * 22


def usage(total: int) -> dict[str, int]:
    return {"input_tokens": total - 10, "output_tokens": 10, "total_tokens": total}


def is_compaction_request(body: dict) -> bool:
    last = input_texts(body)[-1]
    return last[0] == "user" and (
        last[1].startswith(default_prompt("handoff")[:40])
        or last[1].startswith(default_prompt("checkpoint")[:40])
    )


async def chat(session: Session, server, text: str, answer: str, total: int | None = None):
    server.enqueue(Reply(text=answer, usage=usage(total) if total else None))
    return await run(session, ops.UserTurn(text=text))


async def compact(session: Session, server, summary: str, focus: str | None = None):
    server.enqueue(Reply(text=summary))
    return await run(session, ops.Compact(focus=focus))


# ------------------------------------------------------------------ manual, local path


async def test_turn_compact_turn_requests(server, make_config):
    session = await Session.open(make_config())
    await chat(session, server, "first question", "first answer")
    await compact(session, server, "SUMMARY-1")
    await chat(session, server, "second question", "second answer")

    bodies = [r.body for r in server.requests_to("responses")]
    assert len(bodies) == 3
    assert len({b["instructions"] for b in bodies}) == 1  # identical instructions
    # The prompt is last in the compaction request, with no tools, and never again.
    assert input_texts(bodies[1])[-1] == ("user", default_prompt("handoff"))
    assert input_texts(bodies[1])[:-1] == input_texts(bodies[0]) + [("assistant", "first answer")]
    assert not bodies[1].get("tools")
    assert not any(default_prompt("handoff") in t for _, t in input_texts(bodies[2]))
    # The next request: the user message, the prefixed summary, the new message; no assistant.
    assert input_texts(bodies[2]) == [
        ("user", "first question"),
        ("user", f"{PREFIX}\nSUMMARY-1"),
        ("user", "second question"),
    ]
    await session.close()


async def test_manual_compaction_event_order_and_item_ids(server, make_config):
    session = await Session.open(make_config())
    await chat(session, server, "q", "a")
    events = await compact(session, server, "S")
    kinds = [e for e in types(events) if e != "compaction_progress"]
    assert kinds == [
        "turn_started",
        "item_started",
        "token_count",  # API usage of the compaction request
        "token_count",  # local estimate of the new history
        "item_completed",
        "context_compacted",
        "undo_available",  # the window's Undo follows the core
        "warning",  # a two-message chat gains from no summary: said as a warning
        "warning",  # the once-a-session note on long conversations
        "turn_complete",
    ]
    started, completed = of_type(events, "item_started")[0], of_type(events, "item_completed")[0]
    assert started.item.kind == completed.item.kind == "context_compaction"
    assert started.item.id == completed.item.id == of_type(events, "context_compacted")[0].item_id
    assert of_type(events, "turn_started")[0].kind == "compact"
    assert not of_type(events, "agent_message")
    await session.close()


async def test_token_counts_from_api_then_local_estimate(server, make_config):
    session = await Session.open(make_config())
    await chat(session, server, "q" * 400, "a" * 400, total=500)
    server.enqueue(Reply(text="short summary", usage=usage(700)))
    events = await run(session, ops.Compact())
    api, estimate = of_type(events, "token_count")
    assert (api.source, api.total) == ("api", 700)
    assert estimate.source == "estimate"
    compacted = of_type(events, "context_compacted")[0]
    assert compacted.tokens_before == 500
    assert compacted.tokens_after == estimate.total == session.token_usage().total
    assert 0 < estimate.total < 500
    await session.close()


async def test_custom_prompt_replaces_default(server, make_config):
    session = await Session.open(make_config(compact_prompt="Summarise like a pirate."))
    await chat(session, server, "q", "a")
    await compact(session, server, "S")
    body = server.requests_to("responses")[1].body
    assert input_texts(body)[-1] == ("user", "Summarise like a pirate.")
    assert default_prompt("handoff") not in json.dumps(body)
    await session.close()


async def test_focus_is_added_to_the_prompt(server, make_config):
    session = await Session.open(make_config())
    await chat(session, server, "q", "a")
    events = await compact(session, server, "S", focus="the database schema")
    prompt = input_texts(server.requests_to("responses")[1].body)[-1][1]
    assert prompt.startswith(default_prompt("handoff"))
    assert prompt.endswith("Additional focus: the database schema")
    assert of_type(events, "context_compacted")[0].focus == "the database schema"
    await session.close()


async def test_compaction_request_uses_compaction_model_and_cache_key(server, make_config):
    session = await Session.open(make_config(compaction_model="small-model"))
    await chat(session, server, "q", "a")
    await compact(session, server, "S")
    first, compaction = (r.body for r in server.requests_to("responses"))
    assert first["model"] == "test-model" and compaction["model"] == "small-model"
    assert compaction["prompt_cache_key"] == session.id
    # The request-kind header helps the offline demo model only; no real provider sees it.
    assert "x-coco-request-kind" not in server.requests_to("responses")[1].headers
    assert (compaction["tools"], compaction["tool_choice"]) == ([], "auto")  # as Codex sends
    assert compaction["parallel_tool_calls"] is False


async def test_the_demo_model_is_told_which_request_compacts(server, make_config):
    session = await Session.open(make_config(demo_hints=True))
    await chat(session, server, "q", "a")
    await compact(session, server, "S")
    assert server.requests_to("responses")[1].headers["x-coco-request-kind"] == "compaction"
    await session.close()


async def test_prompt_is_never_stored(server, make_config):
    session = await Session.open(make_config())
    await chat(session, server, "q", "a")
    await compact(session, server, "S")
    prompt = default_prompt("handoff")
    assert not any(prompt in json.dumps(item) for item in session.history())
    assert prompt not in json.dumps(session.transcript())
    await session.close()
    assert prompt[:60] not in session.rollout_path.read_text()


async def test_compacting_an_empty_session_changes_nothing(server, make_config):
    session = await Session.open(make_config())
    events = await run(session, ops.Compact())
    # Information, not a failure: a background line, no error, no failed turn.
    assert of_type(events, "background")[0].message == "Nothing to compact yet."
    assert not of_type(events, "error") and events[-1].status == "completed"
    assert server.requests_to("responses") == []
    assert session.history() == []
    await session.close()


async def test_compact_while_streaming_aborts_the_turn_first(server, make_config):
    session = await Session.open(make_config())
    server.enqueue(Reply(text="long " * 300, chunk_size=5, delay_per_chunk=0.02))
    server.enqueue(Reply(text="SUMMARY"))
    await session.submit(ops.UserTurn(text="talk"))
    await collect(session, "agent_message_delta")
    await session.submit(ops.Compact())
    events = await collect(session, "turn_complete")
    assert events[-1].status == "aborted" and events[-1].kind == "regular"
    events = await collect(session, "turn_complete")
    assert events[-1].kind == "compact" and events[-1].status == "completed"
    interrupted = [e for e in session.transcript() if e.get("interrupted")]
    assert len(interrupted) == 1
    await session.close()


async def test_kept_messages_are_truncated_past_the_budget(server, make_config):
    session = await Session.open(make_config())
    big = "x" * 100_000  # 25 000 estimated tokens: more than the 20 000 budget
    await chat(session, server, big, "ok")
    await chat(session, server, "small question", "ok")
    events = await compact(session, server, "S")
    history = session.history()
    assert history[-2]["content"][0]["text"] == "small question"
    truncated = history[0]["content"][0]["text"]
    assert "tokens truncated" in truncated and len(truncated) < len(big)
    info = of_type(events, "context_compacted")[0]
    assert info.kept_user_messages == 2 and info.kept_truncated
    await session.close()


async def test_two_compactions_keep_latest_user_messages_and_only_the_second_summary(
    server, make_config
):
    session = await Session.open(make_config())
    await chat(session, server, "first user msg", "a1")
    await compact(session, server, "FIRST SUMMARY")
    await chat(session, server, "second user msg", "a2")
    await compact(session, server, "SECOND SUMMARY")
    await chat(session, server, "third user msg", "a3")
    last = server.requests_to("responses")[-1].body
    assert input_texts(last) == [
        ("user", "first user msg"),
        ("user", "second user msg"),
        ("user", f"{PREFIX}\nSECOND SUMMARY"),
        ("user", "third user msg"),
    ]
    await session.close()


async def test_checkpoint_style_merges_the_previous_summary(server, make_config):
    session = await Session.open(make_config(summary_style="checkpoint"))
    await chat(session, server, "goal: build a parser", "ok")
    await compact(session, server, "## Goal\nbuild a parser")
    await chat(session, server, "now add tests", "ok")
    await compact(session, server, "## Goal\nbuild a parser\n## Progress\ntests")
    second = server.requests_to("responses")[-1].body
    texts = [t for _, t in input_texts(second)]
    assert texts[-1] == default_prompt("checkpoint")
    assert "merge it" in default_prompt("checkpoint")
    assert f"{PREFIX}\n## Goal\nbuild a parser" in texts  # previous summary is in the request
    marker = [e for e in session.transcript() if e["kind"] == "compaction"][-1]
    assert marker["style"] == "checkpoint"
    await session.close()


# ------------------------------------------------------------------ overflow while compacting


async def test_overflow_while_compacting_trims_the_oldest_item(server, make_config):
    session = await Session.open(make_config())
    await chat(session, server, "q1", "a1")
    await chat(session, server, "q2", "a2")
    server.enqueue(Fault.overflow())
    server.enqueue(Reply(text="S"))
    events = await run(session, ops.Compact())
    first, retry = (r.body for r in server.requests_to("responses")[2:])
    assert len(retry["input"]) == len(first["input"]) - 1
    assert input_texts(retry) == input_texts(first)[1:]
    assert input_texts(retry)[-1][1] == default_prompt("handoff")
    background = [e.message for e in of_type(events, "background")]
    assert background == [
        "Trimmed 1 older item(s) before compacting so the prompt fits the model context window."
    ]
    # Kept user messages come from the full history, not the trimmed copy.
    assert input_texts({"input": session.history()})[0] == ("user", "q1")
    assert of_type(events, "context_compacted")[0].trimmed_items == 1
    await session.close()


async def test_compaction_retries_stream_errors(server, make_config):
    session = await Session.open(make_config())
    await chat(session, server, "q", "a")
    server.enqueue(Fault.status(500, "oops"))
    server.enqueue(Reply(text="S"))
    events = await run(session, ops.Compact())
    assert [e.message for e in of_type(events, "stream_error")] == ["Reconnecting... 1/5"]
    assert types(events).index("stream_error") < types(events).index("context_compacted")
    await session.close()


async def test_failed_compaction_changes_nothing(server, make_config):
    session = await Session.open(make_config(max_retries=0))
    await chat(session, server, "q", "a")
    before = session.history()
    rollout_before = session.rollout_path.read_text()
    server.enqueue(Fault.status(500, "down"))
    events = await run(session, ops.Compact())
    assert of_type(events, "error")[0].message.startswith("Error running local compact task")
    assert events[-1].status == "failed"
    assert session.history() == before
    assert "compacted" not in session.rollout_path.read_text()[len(rollout_before) :]
    await session.close()


# ------------------------------------------------------------------ automatic compaction


async def test_auto_compaction_fires_once_past_the_limit(server, make_config):
    session = await Session.open(make_config(context_window=1000))
    await chat(session, server, "q1", "a1", total=880)  # under 90 % of 1000
    server.enqueue(Reply(text="AUTO SUMMARY"))
    server.enqueue(Reply(text="a2", usage=usage(300)))
    events = await run(session, ops.UserTurn(text="q2" + PUSH))  # over it with q2
    bodies = [r.body for r in server.requests_to("responses")]
    assert sum(1 for b in bodies if is_compaction_request(b)) == 1
    compacted = of_type(events, "context_compacted")[0]
    assert compacted.trigger == "auto" and compacted.strategy == "local"
    # Auto compaction runs inside the user's turn: one turn_started, one turn_complete.
    assert types(events).count("turn_started") == 1 and types(events)[-1] == "turn_complete"
    assert types(events).index("context_compacted") < types(events).index("agent_message")
    await session.close()


async def test_pre_turn_compaction_excludes_the_incoming_message(server, make_config):
    session = await Session.open(make_config(context_window=1000))
    await chat(session, server, "q1", "a1", total=880)
    server.enqueue(Reply(text="S"))
    server.enqueue(Reply(text="a2"))
    await run(session, ops.UserTurn(text="INCOMING" + PUSH))
    compaction, follow = (r.body for r in server.requests_to("responses")[1:])
    assert "INCOMING" not in json.dumps(compaction)
    assert input_texts(follow) == [
        ("user", "q1"), ("user", f"{PREFIX}\nS"), ("user", "INCOMING" + PUSH)
    ]
    await session.close()


async def test_mid_turn_compaction_keeps_summary_last_and_continues(server, make_config, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "big.txt").write_text("data\n" * 10)
    session = await Session.open(make_config(context_window=4096, workspace=ws))
    server.enqueue(
        Reply(function_calls=[ToolCall("read_file", {"path": "big.txt"})], usage=usage(3950))
    )
    server.enqueue(Reply(text="MID SUMMARY"))
    server.enqueue(Reply(text="final answer", usage=usage(200)))
    events = await run(session, ops.UserTurn(text="read big.txt"))
    bodies = [r.body for r in server.requests_to("responses")]
    assert len(bodies) == 3 and is_compaction_request(bodies[1])
    follow = input_texts(bodies[2])
    assert follow[-1] == ("user", f"{PREFIX}\nMID SUMMARY")  # the summary stays last
    # The carried notes sit just before the summary and name the file the turn read.
    assert follow[-2][1].startswith("[Coco carried notes]")
    assert "Files read (newest first):\n- big.txt" in follow[-2][1]
    assert follow[-3] == ("user", "read big.txt")
    assert follow[-4][1].startswith("<environment_context>")  # context before the last user msg
    assert events[-1].status == "completed" and events[-1].last_agent_message == "final answer"
    assert of_type(events, "context_compacted")[0].trigger == "auto"
    await session.close()


async def test_final_answer_never_compacts_mid_turn(server, make_config):
    session = await Session.open(make_config(context_window=1000))
    events = await chat(session, server, "q1", "a1", total=990)
    assert not of_type(events, "context_compacted")
    assert len(server.requests_to("responses")) == 1
    await session.close()


async def test_never_compacts_twice_on_the_same_history(server, make_config):
    # A summary larger than the window is cut to fit the target: the next turn, even one
    # whose answer reports the context full again, must not compact it again at once.
    session = await Session.open(make_config(context_window=1000))
    await chat(session, server, "q1", "a1", total=950)
    events = await compact(session, server, "S" * 4000)  # ~1000 tokens
    info = of_type(events, "context_compacted")[0]
    assert info.shrunk is not None and info.shrunk["summary_truncated"] is True
    assert session.token_usage().total <= info.target == 450
    events = await chat(session, server, "q2", "a2", total=960)
    assert not of_type(events, "context_compacted")
    assert len(server.requests_to("responses")) == 3  # q1, the compaction, q2: no second one
    await session.close()


async def test_auto_compact_off_is_honoured(server, make_config):
    session = await Session.open(make_config(context_window=1000, auto_compact=False))
    await chat(session, server, "q1", "a1", total=990)
    await chat(session, server, "q2", "a2", total=995)
    assert not any(is_compaction_request(r.body) for r in server.requests_to("responses"))
    await session.close()


@pytest.mark.parametrize("configured, expected", [(None, 900), (500, 500), (5000, 900)])
async def test_limit_is_clamped_to_ninety_percent(server, make_config, configured, expected):
    config = make_config(context_window=1000, auto_compact_token_limit=configured)
    session = await Session.open(config)
    event = (await collect(session, "token_count"))[-1]
    assert event.auto_compact_limit == expected
    await session.close()


async def test_switching_to_a_smaller_model_compacts_with_the_old_one(server, make_config):
    config = make_config(model="gpt-4.1", context_window=None)
    session = await Session.open(config)
    await chat(session, server, "q1", "a1", total=200_000)
    await session.submit(ops.UpdateConfig(config=config.model_copy(update={"model": "gpt-4o"})))
    server.enqueue(Reply(text="S"))
    server.enqueue(Reply(text="a2"))
    events = await run(session, ops.UserTurn(text="q2"))
    compaction, follow = (r.body for r in server.requests_to("responses")[1:])
    assert is_compaction_request(compaction) and compaction["model"] == "gpt-4.1"
    assert follow["model"] == "gpt-4o"
    assert of_type(events, "context_compacted")[0].trigger == "auto"
    await session.close()


# ------------------------------------------------------------------ overflow recovery


async def test_overflow_compacts_and_retries_the_turn_once(server, make_config):
    session = await Session.open(make_config(context_window=1000))
    await chat(session, server, "q1", "a1")
    server.enqueue(Fault.overflow())
    server.enqueue(Reply(text="S"))
    server.enqueue(Reply(text="recovered"))
    events = await run(session, ops.UserTurn(text="q2"))
    compacted = of_type(events, "context_compacted")[0]
    assert compacted.trigger == "overflow"
    assert events[-1].status == "completed" and events[-1].last_agent_message == "recovered"
    compaction, retry = (r.body for r in server.requests_to("responses")[2:])
    # Overflow on the turn's first request: the pre-turn shape. The new message is not in the
    # compaction request and comes back last, after the summary.
    assert "q2" not in [t for _, t in input_texts(compaction)]
    assert input_texts(retry) == [("user", "q1"), ("user", f"{PREFIX}\nS"), ("user", "q2")]
    await session.close()


async def test_overflow_on_a_follow_up_keeps_the_summary_last(server, make_config, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\n")
    session = await Session.open(make_config(context_window=8000, workspace=ws))
    server.enqueue(Reply(function_calls=[ToolCall("read_file", {"path": "a.txt"})]))
    server.enqueue(Fault.overflow())
    server.enqueue(Reply(text="S"))
    server.enqueue(Reply(text="done"))
    events = await run(session, ops.UserTurn(text="read a.txt"))
    assert events[-1].status == "completed"
    retry = server.requests_to("responses")[-1].body
    assert input_texts(retry)[-1] == ("user", f"{PREFIX}\nS")  # mid-turn shape
    assert ("user", "read a.txt") in input_texts(retry)
    await session.close()


async def test_second_overflow_ends_the_turn_with_advice(server, make_config):
    session = await Session.open(make_config(context_window=1000))
    await chat(session, server, "q1", "a1")
    server.enqueue(Fault.overflow())
    server.enqueue(Reply(text="S"))
    server.enqueue(Fault.overflow())
    events = await run(session, ops.UserTurn(text="q2"))
    error = of_type(events, "error")[-1]
    assert error.kind == "context_overflow"
    assert "recovery failed after one compact-and-retry" in error.message
    assert "new conversation" in error.message
    assert events[-1].status == "failed"
    assert len(server.requests_to("responses")) == 4  # q1, q2, compaction, retry: no more
    await session.close()


async def test_auto_off_is_honoured_on_overflow(server, make_config):
    session = await Session.open(make_config(context_window=1000, auto_compact=False))
    await chat(session, server, "q1", "a1")
    server.enqueue(Fault.overflow())
    events = await run(session, ops.UserTurn(text="q2"))
    assert not of_type(events, "context_compacted")
    assert of_type(events, "error")[0].kind == "context_overflow"
    assert "automatic compaction is off" in of_type(events, "error")[0].message
    assert len(server.requests_to("responses")) == 2
    usage_event = of_type(events, "token_count")[-1]
    assert usage_event.total == 1000  # usage is set to the full window
    await session.close()


# ------------------------------------------------------------------ remote path


async def test_remote_replaces_history_and_follow_up_carries_encrypted_item(server, make_config):
    session = await Session.open(make_config(remote_compaction=True))
    await chat(session, server, "q1", "a1")
    trigger_unsupported(server)
    server.enqueue(CompactReply(encrypted_content="ENC-OPAQUE-123"), endpoint="compact")
    events = await run(session, ops.Compact())
    background = [e.message for e in of_type(events, "background")]
    assert any("trying /responses/compact" in m for m in background)
    body = server.requests_to("compact")[0].body
    assert body["model"] == "test-model" and body["prompt_cache_key"] == session.id
    assert body["instructions"] == "You are a test assistant."
    assert input_texts(body) == [("user", "q1"), ("assistant", "a1")]
    compacted = of_type(events, "context_compacted")[0]
    assert compacted.strategy == "remote" and compacted.summary == ""
    assert not any("Heads up" in w.message for w in of_type(events, "warning"))
    assert not of_type(events, "stream_error")
    history = session.history()
    assert history[-1]["type"] == "compaction"
    assert history[0]["role"] == "user"
    await chat(session, server, "q2", "a2")
    follow = server.requests_to("responses")[-1].body
    enc = [i for i in follow["input"] if i.get("type") == "compaction"]
    assert enc and enc[0]["encrypted_content"] == "ENC-OPAQUE-123"
    await session.close()


async def test_remote_output_is_filtered(server, make_config):
    session = await Session.open(make_config(remote_compaction=True))
    await chat(session, server, "q1", "a1")
    output = [
        {
            "type": "message",
            "role": "developer",
            "content": [{"type": "input_text", "text": "dev"}],
        },
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "q1"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "R"},
        {"type": "function_call", "call_id": "c", "name": "x", "arguments": "{}"},
        {"type": "compaction", "id": "cmp_1", "encrypted_content": "E"},
    ]
    trigger_unsupported(server)
    server.enqueue(CompactReply(output=output), endpoint="compact")
    await run(session, ops.Compact())
    assert [i.get("role") or i["type"] for i in session.history()] == ["user", "compaction"]
    await session.close()


async def test_remote_failure_falls_back_to_local(server, make_config):
    session = await Session.open(make_config(remote_compaction=True, max_retries=0))
    await chat(session, server, "q1", "a1")
    trigger_unsupported(server)
    server.enqueue(Fault.status(500, "compact broke"), endpoint="compact")
    server.enqueue(Reply(text="LOCAL SUMMARY"))
    events = await run(session, ops.Compact())
    compacted = of_type(events, "context_compacted")[0]
    assert compacted.strategy == "remote_then_local"
    assert compacted.remote_form == "standalone"
    background = of_type(events, "background")[-1].message
    assert "Remote compaction failed" in background and "locally" in background
    assert session.history()[-1]["content"][0]["text"] == f"{PREFIX}\nLOCAL SUMMARY"
    assert of_type(events, "warning")  # local path ran
    await session.close()


async def test_remote_404_is_remembered_for_the_base_url(server, make_config):
    config = make_config(remote_compaction=True)
    session = await Session.open(config)
    await chat(session, server, "q1", "a1")
    trigger_unsupported(server)
    server.enqueue(Fault.status(404, "no such endpoint"), endpoint="compact")
    server.enqueue(Reply(text="S1"))
    await run(session, ops.Compact())
    await chat(session, server, "q2", "a2")
    server.enqueue(Reply(text="S2"))
    events = await run(session, ops.Compact())
    assert len(server.requests_to("compact")) == 1  # the second went local directly
    assert of_type(events, "context_compacted")[0].strategy == "local"
    await session.close()
    # Remembered on disk: a new session (after a restart) goes local at once too...
    again = await Session.open(config)
    await chat(again, server, "q3", "a3")
    server.enqueue(Reply(text="S3"))
    requests = len(server.requests)
    events = await run(again, ops.Compact())
    assert len(server.requests) == requests + 1  # only the local summary request
    assert of_type(events, "context_compacted")[0].strategy == "local"
    await again.close()


async def test_remote_failure_without_fallback_errors_and_changes_nothing(server, make_config):
    config = make_config(remote_compaction=True, remote_fallback_to_local=False, max_retries=0)
    session = await Session.open(config)
    await chat(session, server, "q1", "a1")
    before = session.history()
    trigger_unsupported(server)
    server.enqueue(Fault.status(500, "compact broke"), endpoint="compact")
    events = await run(session, ops.Compact())
    error = of_type(events, "error")[0]
    assert error.message.startswith("Error running remote compact task: ")
    assert len(server.requests) == 3  # the turn, the trigger, the compact call: no local one
    assert session.history() == before
    assert events[-1].status == "failed"
    await session.close()


async def test_chat_wire_api_compacts_locally(server, make_config):
    session = await Session.open(make_config(wire_api="chat", remote_compaction=True))
    server.enqueue(Reply(text="a1"), endpoint="chat")
    await run(session, ops.UserTurn(text="q1"))
    server.enqueue(Reply(text="S"), endpoint="chat")
    events = await run(session, ops.Compact())
    assert of_type(events, "context_compacted")[0].strategy == "local"
    assert server.requests_to("compact") == []
    await session.close()


# ------------------------------------------------------------------ persistence, resume, undo


async def test_resume_prefix_invariant_after_one_compaction(server, make_config):
    config = make_config()
    session = await Session.open(config)
    await chat(session, server, "q1", "a1")
    await compact(session, server, "S1")
    await chat(session, server, "q2", "a2")
    after_compaction = server.requests_to("responses")[-1].body["input"]
    await session.close()
    resumed = await Session.open(config, session_id=session.id)
    await chat(resumed, server, "q3", "a3")
    after_resume = server.requests_to("responses")[-1].body["input"]
    assert after_resume[: len(after_compaction)] == after_compaction
    await resumed.close()


async def test_resume_prefix_invariant_after_two_compactions(server, make_config):
    config = make_config()
    session = await Session.open(config)
    await chat(session, server, "q1", "a1")
    await compact(session, server, "S1")  # local
    await chat(session, server, "q2", "a2")
    remote = config.model_copy(update={"remote_compaction": True})
    await session.submit(ops.UpdateConfig(config=remote))
    server.enqueue(CompactReply(encrypted_content="ENC-2"), endpoint="compact")
    await run(session, ops.Compact())
    await chat(session, server, "q3", "a3")
    after_compaction = server.requests_to("responses")[-1].body["input"]
    await session.close()
    resumed = await Session.open(config, session_id=session.id)
    assert resumed.history() == session.history()
    await chat(resumed, server, "q4", "a4")
    after_resume = server.requests_to("responses")[-1].body["input"]
    assert after_resume[: len(after_compaction)] == after_compaction
    markers = [e for e in resumed.transcript() if e["kind"] == "compaction"]
    assert len(markers) == 2
    await resumed.close()


async def test_transcript_keeps_everything_and_marks_the_compaction(server, make_config):
    session = await Session.open(make_config())
    await chat(session, server, "q1", "a1")
    await compact(session, server, "S1")
    entries = session.transcript()
    kinds = [e["kind"] for e in entries]
    assert kinds[:3] == ["item", "item", "compaction"]
    # q1 was kept verbatim: the model still sees it. The answer it no longer sees.
    assert entries[0]["in_context"] is True and entries[1]["in_context"] is False
    marker = entries[2]
    assert marker["summary"] == "S1" and marker["trigger"] == "manual"
    assert marker["strategy"] == "local" and marker["tokens_after"] > 0
    record = next(
        json.loads(line)
        for line in session.rollout_path.read_text().splitlines()
        if '"compacted"' in line
    )["payload"]
    assert record["message"] == f"{PREFIX}\nS1"
    assert record["replacement_history"] == session.history()
    assert record["trigger"] == "manual" and record["strategy"] == "local"
    for key in ("tokens_before", "tokens_after", "duration_ms", "focus"):
        assert key in record
    await session.close()


async def test_undo_restores_the_history_exactly(server, make_config):
    config = make_config()
    session = await Session.open(config)
    await chat(session, server, "q1", "a1")
    before = session.history()
    await compact(session, server, "S1")
    assert session.history() != before
    await session.submit(ops.UndoCompaction())
    events = await collect(session, "compaction_undone")
    assert session.history() == before
    await collect(session, "token_count")
    assert next(e for e in session.transcript() if e["kind"] == "compaction")["undone"] is True
    assert all(e["in_context"] for e in session.transcript())
    await session.close()
    resumed = await Session.open(config, session_id=session.id)
    assert resumed.history() == before  # resume honours the undo
    await resumed.close()
    assert events


async def test_transcript_says_which_compaction_can_be_undone(server, make_config):
    config = make_config()
    session = await Session.open(config)
    await chat(session, server, "q1", "a1")
    await compact(session, server, "S1")
    marker = next(e for e in session.transcript() if e["kind"] == "compaction")
    assert marker["undoable"] is True
    await session.close()
    resumed = await Session.open(config, session_id=session.id)
    marker = next(e for e in resumed.transcript() if e["kind"] == "compaction")
    assert marker["undoable"] is True  # still undoable after resume: no turn since
    await chat(resumed, server, "q2", "a2")
    marker = next(e for e in resumed.transcript() if e["kind"] == "compaction")
    assert marker["undoable"] is False
    await resumed.close()


async def test_undo_is_refused_after_a_new_turn(server, make_config):
    session = await Session.open(make_config())
    await chat(session, server, "q1", "a1")
    await compact(session, server, "S1")
    await chat(session, server, "q2", "a2")
    await session.submit(ops.UndoCompaction())
    error = (await collect(session, "error"))[-1]
    assert error.message == "Cannot undo the compaction: a new turn has started since."
    await session.close()


async def test_cancel_compaction_changes_nothing(server, make_config):
    session = await Session.open(make_config())
    await chat(session, server, "q1", "a1")
    before = session.history()
    rollout = session.rollout_path.read_text()
    # The summary request hangs far longer than collect() waits: the turn can only complete
    # in time because the interrupt cancelled it.
    server.enqueue(Fault.hang(60))
    await session.submit(ops.Compact())
    await asyncio.to_thread(server.wait_for_requests, 2, "responses")
    await session.submit(ops.Interrupt())
    events = await collect(session, "turn_complete")
    assert events[-1].kind == "compact" and events[-1].status == "aborted"
    assert not of_type(events, "context_compacted")
    assert session.history() == before
    # Only the stop itself was recorded (the marker is shown again on resume).
    added = session.rollout_path.read_text()[len(rollout):].splitlines()
    assert session.rollout_path.read_text().startswith(rollout) and len(added) == 1
    assert json.loads(added[0])["payload"]["kind"] == "compaction_ended"
    assert json.loads(added[0])["payload"]["status"] == "stopped"
    await session.close()


async def test_stopping_a_pre_turn_compaction_keeps_the_new_message(server, make_config):
    session = await Session.open(make_config(context_window=1000))
    await chat(session, server, "q1", "a1", total=880)
    before = session.history()
    server.enqueue(Fault.hang(5))
    await session.submit(ops.UserTurn(text="my new question" + PUSH))
    await asyncio.to_thread(server.wait_for_requests, 2, "responses")
    await session.submit(ops.Interrupt())
    events = await collect(session, "turn_complete")
    assert events[-1].status == "aborted"
    assert not of_type(events, "context_compacted")
    history = session.history()
    assert history[: len(before)] == before  # not compacted
    assert input_texts({"input": history})[-1] == ("user", "my new question" + PUSH)
    await session.close()


async def test_context_compacted_carries_the_figures(server, make_config):
    session = await Session.open(make_config())
    await chat(session, server, "q1", "a1", total=300)
    await chat(session, server, "q2", "a2", total=400)
    events = await compact(session, server, "S")
    info = of_type(events, "context_compacted")[0]
    assert info.tokens_before == 400
    assert 0 < info.tokens_after < info.tokens_before
    assert info.duration_ms >= 0
    assert (info.trigger, info.strategy) == ("manual", "local")
    assert info.kept_user_messages == 2 and info.kept_truncated is False
    assert info.summary == "S" and info.undoable
    await session.close()


async def test_undo_available_says_how_long_undo_lasts_and_then_why_it_is_gone(
    server, make_config
):
    from app.core.compaction.undo import GONE_AFTER_TURN, UNTIL_NEXT_MESSAGE

    session = await Session.open(make_config())
    await chat(session, server, "q1", "a1")
    events = await compact(session, server, "S")
    marker = of_type(events, "context_compacted")[0].item_id
    state = of_type(events, "undo_available")[-1]
    assert (state.item_id, state.last_compaction, state.note) == (
        marker, marker, UNTIL_NEXT_MESSAGE
    )
    events = await chat(session, server, "q2", "a2")
    state = of_type(events, "undo_available")[-1]
    assert state.item_id is None and state.last_compaction == marker
    assert state.note == GONE_AFTER_TURN and "new turn" in state.reason
    # Reopened, the session says the same.
    await session.close()
    again = await Session.open(make_config(), session_id=session.id)
    told = [e for e in again.replay_events() if e.type == "undo_available"][-1]
    assert (told.last_compaction, told.note) == (marker, GONE_AFTER_TURN)
    await again.close()
