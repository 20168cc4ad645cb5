"""The core engine end to end: the public API against the scripted loopback server."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from app.core import Session, ops
from app.demo import Fault, Reply, ToolCall
from tests.conftest import TEST_KEY, collect, input_texts, of_type, run, types


async def test_streamed_turn_events_and_request_body(server, make_config):
    server.enqueue(Reply(text="Hello there, friend.", chunk_size=5))
    session = await Session.open(make_config())
    events = await run(session, ops.UserTurn(text="hi"))

    kinds = types(events)
    assert kinds[:2] == ["session_configured", "token_count"]
    assert kinds.index("turn_started") < kinds.index("agent_message_delta")
    assert kinds[-1] == "turn_complete"
    deltas = "".join(e.delta for e in of_type(events, "agent_message_delta"))
    assert deltas == "Hello there, friend."
    assert of_type(events, "agent_message")[0].text == "Hello there, friend."
    assert events[-1].status == "completed"
    assert events[-1].last_agent_message == "Hello there, friend."

    body = server.requests_to("responses")[0].body
    assert body["stream"] is True
    assert body["store"] is False
    assert body["instructions"] == "You are a test assistant."
    assert body["prompt_cache_key"] == session.id
    assert input_texts(body) == [("user", "hi")]
    # No workspace: only the recall tool (it needs no folder).
    assert [tool["name"] for tool in body["tools"]] == ["recall"]

    usage = of_type(events, "token_count")[-1]
    assert usage.source == "api" and usage.total > 0
    assert [i["role"] for i in session.history()] == ["user", "assistant"]
    await session.close()


async def test_prompt_cache_key_is_session_id_on_every_request(server, make_config, tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("alpha\nbeta\n")
    server.enqueue(Reply(function_calls=[ToolCall("read_file", {"path": "notes.txt"})]))
    server.enqueue(Reply(text="It says alpha and beta."))
    server.enqueue(Reply(text="Second answer."))
    session = await Session.open(make_config(workspace=tmp_path / "ws"))
    await run(session, ops.UserTurn(text="read notes"))
    await run(session, ops.UserTurn(text="again"))
    bodies = [r.body for r in server.requests_to("responses")]
    assert len(bodies) == 3
    assert {b["prompt_cache_key"] for b in bodies} == {session.id}
    await session.close()


async def test_tool_loop_reads_workspace_and_feeds_output_back(server, make_config, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("alpha\nbeta\n")
    server.enqueue(Reply(function_calls=[ToolCall("read_file", {"path": "notes.txt"}, "call_1")]))
    server.enqueue(Reply(text="Done reading."))
    session = await Session.open(make_config(workspace=ws))
    events = await run(session, ops.UserTurn(text="what is in notes.txt?"))

    second = server.requests_to("responses")[1].body
    output = next(i for i in second["input"] if i.get("type") == "function_call_output")
    assert output["call_id"] == "call_1"
    assert "alpha" in output["output"] and "beta" in output["output"]
    assert any(t["name"] == "read_file" for t in second["tools"])
    # The environment block opens the session, before the first user message.
    roles = input_texts(second)
    assert roles[0][1].startswith("<environment_context>")
    assert roles[1] == ("user", "what is in notes.txt?")
    completed = [e.item.kind for e in of_type(events, "item_completed")]
    assert completed.count("function_call") == 1 and completed.count("function_call_output") == 1
    assert events[-1].last_agent_message == "Done reading."
    await session.close()


async def test_tool_call_outside_workspace_is_refused(server, make_config, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET CONTENT")
    server.enqueue(Reply(function_calls=[ToolCall("read_file", {"path": "../secret.txt"})]))
    server.enqueue(Reply(text="I could not read it."))
    session = await Session.open(make_config(workspace=ws))
    await run(session, ops.UserTurn(text="read ../secret.txt"))
    second = server.requests_to("responses")[1].body
    output = next(i for i in second["input"] if i.get("type") == "function_call_output")
    assert "outside the workspace" in output["output"]
    assert "TOP SECRET" not in json.dumps(second)
    await session.close()


async def test_rate_limit_retries_with_reconnecting_events(server, make_config):
    server.enqueue(Fault.status(429, "slow down", retry_after=0.01))
    server.enqueue(Fault.status(500, "boom"))
    server.enqueue(Reply(text="finally"))
    session = await Session.open(make_config())
    events = await run(session, ops.UserTurn(text="hi"))
    notices = [e.message for e in of_type(events, "stream_error")]
    assert notices == ["Reconnecting... 1/5", "Reconnecting... 2/5"]
    assert events[-1].status == "completed" and events[-1].last_agent_message == "finally"
    assert len(server.requests_to("responses")) == 3
    await session.close()


async def test_server_errors_give_up_after_five_retries(server, make_config):
    for _ in range(6):
        server.enqueue(Fault.status(503, "unavailable"))
    session = await Session.open(make_config())
    events = await run(session, ops.UserTurn(text="hi"))
    assert [e.attempt for e in of_type(events, "stream_error")] == [1, 2, 3, 4, 5]
    errors = of_type(events, "error")
    assert len(errors) == 1 and errors[0].kind == "server"
    assert events[-1].status == "failed"
    assert len(server.requests_to("responses")) == 6
    # The user's message is kept and the session goes on.
    server.enqueue(Reply(text="back"))
    events = await run(session, ops.UserTurn(text="again"))
    assert events[-1].status == "completed"
    await session.close()


async def test_rejected_key_names_the_server_not_the_key(server, make_config):
    server.enqueue(Fault.status(401, f"Incorrect API key provided: {TEST_KEY}"))
    config = make_config()
    session = await Session.open(config)
    events = await run(session, ops.UserTurn(text="hi"))
    error = of_type(events, "error")[0]
    assert error.message == f"the server rejected the API key for {server.url}"
    assert error.kind == "auth"
    assert len(server.requests_to("responses")) == 1  # never retried
    await session.close()
    assert TEST_KEY not in session.rollout_path.read_text()


async def test_unreachable_server_is_reported_and_nothing_is_lost(make_config, tmp_path):
    config = make_config(base_url="http://127.0.0.1:9/v1", max_retries=1)
    session = await Session.open(config)
    events = await run(session, ops.UserTurn(text="are you there?"))
    error = of_type(events, "error")[0]
    assert error.kind == "connection"
    assert "127.0.0.1:9" in error.message
    await session.close()
    resumed = await Session.open(config, session_id=session.id)
    assert [json.dumps(i) for i in resumed.history()] == [json.dumps(i) for i in session.history()]
    assert resumed.history()[0]["content"][0]["text"] == "are you there?"
    await resumed.close()


async def test_stream_cut_midway_is_retried(server, make_config):
    server.enqueue(Fault.cut(after_chunks=2))
    server.enqueue(Reply(text="complete answer"))
    session = await Session.open(make_config())
    events = await run(session, ops.UserTurn(text="hi"))
    assert of_type(events, "stream_error")[0].message == "Reconnecting... 1/5"
    assert events[-1].last_agent_message == "complete answer"
    assistant = [i for i in session.history() if i.get("role") == "assistant"]
    assert len(assistant) == 1  # the cut attempt left nothing behind
    await session.close()


async def test_malformed_reply_and_inband_error_are_clear(server, make_config):
    for _ in range(2):
        server.enqueue(Fault.malformed())
    session = await Session.open(make_config(max_retries=1))
    events = await run(session, ops.UserTurn(text="hi"))
    assert of_type(events, "error")[0].kind in ("malformed", "stream")
    server.enqueue(Fault.inband_error("model is overloaded", code="server_error"))
    server.enqueue(Reply(text="ok now"))
    events = await run(session, ops.UserTurn(text="again"))
    assert events[-1].last_agent_message == "ok now" or of_type(events, "error")
    await session.close()


async def test_interrupt_stops_stream_quickly_and_keeps_partial_text(server, make_config):
    server.enqueue(Reply(text="word " * 400, chunk_size=5, delay_per_chunk=0.02))
    session = await Session.open(make_config())
    await session.submit(ops.UserTurn(text="tell me a long story"))
    await collect(session, "agent_message_delta")
    await session.submit(ops.Interrupt())
    events = await collect(session, "turn_complete")
    assert events[-1].status == "aborted"
    # The turn ended before the reply had streamed to its end (it takes seconds).
    assert not of_type(events, "agent_message")
    assert [e.message for e in of_type(events, "warning")] == ["Interrupted by the user."]
    entries = [e for e in session.transcript() if e["kind"] == "item"]
    assert entries[-1]["item"]["role"] == "assistant" and entries[-1]["interrupted"] is True
    assert entries[-1]["item"]["content"][0]["text"].startswith("word")
    # History stays valid: the next turn works and carries the partial reply.
    server.enqueue(Reply(text="sure"))
    events = await run(session, ops.UserTurn(text="continue"))
    assert events[-1].status == "completed"
    await session.close()


async def test_interrupt_during_tool_call_leaves_no_dangling_call(server, make_config, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    server.enqueue(Reply(function_calls=[ToolCall("list_directory", {"path": "."}, "c1")]))
    server.enqueue(Fault.hang(5))
    session = await Session.open(make_config(workspace=ws))
    await session.submit(ops.UserTurn(text="list"))
    await asyncio.to_thread(server.wait_for_requests, 2, "responses")
    await session.submit(ops.Interrupt())
    events = await collect(session, "turn_complete")
    assert events[-1].status == "aborted"
    history = session.history()
    calls = {i["call_id"] for i in history if i.get("type") == "function_call"}
    outputs = {i["call_id"] for i in history if i.get("type") == "function_call_output"}
    assert calls <= outputs
    await session.close()


async def test_resume_rebuilds_history_and_transcript_exactly(server, make_config, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("content A")
    server.enqueue(Reply(text="first answer", reasoning="ENCRYPTED-REASONING-1"))
    server.enqueue(Reply(function_calls=[ToolCall("read_file", {"path": "a.txt"})]))
    server.enqueue(Reply(text="it says content A"))
    config = make_config(workspace=ws)
    session = await Session.open(config)
    await run(session, ops.UserTurn(text="one"))
    await run(session, ops.UserTurn(text="two"))
    before_history = session.history()
    before_transcript = session.transcript()
    before_usage = session.token_usage().total
    await session.close()

    resumed = await Session.open(config, session_id=session.id)
    first = await collect(resumed, "token_count")
    assert first[0].type == "session_configured" and first[0].resumed
    assert resumed.history() == before_history
    assert resumed.transcript() == before_transcript
    assert resumed.token_usage().total == before_usage
    reasoning = [i for i in resumed.history() if i.get("type") == "reasoning"]
    assert reasoning[0]["encrypted_content"] == "ENCRYPTED-REASONING-1"
    # And the resumed session goes on with the same input prefix.
    server.enqueue(Reply(text="three"))
    await run(resumed, ops.UserTurn(text="three?"))
    last = server.requests_to("responses")[-1].body
    assert last["input"][: len(before_history)] == before_history
    await resumed.close()


async def test_corrupt_rollout_line_is_skipped_with_a_warning(server, make_config):
    server.enqueue(Reply(text="a1"))
    server.enqueue(Reply(text="a2"))
    config = make_config()
    session = await Session.open(config)
    await run(session, ops.UserTurn(text="q1"))
    await run(session, ops.UserTurn(text="q2"))
    await session.close()
    path: Path = session.rollout_path
    lines = path.read_text().splitlines()
    bad = next(i for i, line in enumerate(lines) if '"a1"' in line)
    lines[bad] = '{"timestamp": "x", "type": "response_item", "payl'
    path.write_text("\n".join(lines) + "\n" + '{"timestamp": "y", "type": "resp')

    resumed = await Session.open(config, session_id=session.id)
    events = await collect(resumed, "token_count")
    warnings = [e.message for e in of_type(events, "warning")]
    assert any(f"line {bad + 1}" in w for w in warnings)
    assert any("incomplete last line" in w for w in warnings)
    texts = [i["content"][0]["text"] for i in resumed.history()]
    assert texts == ["q1", "q2", "a2"]
    server.enqueue(Reply(text="a3"))
    events = await run(resumed, ops.UserTurn(text="q3"))
    assert events[-1].status == "completed"
    await resumed.close()
    again = await Session.open(config, session_id=session.id)
    assert [i["content"][0]["text"] for i in again.history()][-2:] == ["q3", "a3"]
    await again.close()


async def test_chat_completions_adapter_round_trip(server, make_config, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("hello file")
    server.enqueue(
        Reply(function_calls=[ToolCall("read_file", {"path": "f.txt"}, "call_9")]), endpoint="chat"
    )
    server.enqueue(Reply(text="The file says hello."), endpoint="chat")
    session = await Session.open(make_config(wire_api="chat", workspace=ws))
    events = await run(session, ops.UserTurn(text="read f.txt"))
    assert events[-1].last_agent_message == "The file says hello."
    second = server.requests_to("chat")[1].body
    roles = [m["role"] for m in second["messages"]]
    assert roles[0] == "system" and "tool" in roles
    assistant = next(m for m in second["messages"] if m.get("tool_calls"))
    assert assistant["tool_calls"][0]["id"] == "call_9"
    tool = next(m for m in second["messages"] if m["role"] == "tool")
    assert tool["tool_call_id"] == "call_9" and "hello file" in tool["content"]
    kinds = [i.get("type") for i in session.history()]
    assert "function_call" in kinds and "function_call_output" in kinds
    await session.close()


APPROXIMATE_SCRIPT = """
import asyncio, sys, tempfile
from pathlib import Path
from app.core import CoreConfig, Session, ops, tokens
from app.demo import ModelServer, Reply

async def main():
    srv = ModelServer(mode="scripted").start()
    srv.enqueue(Reply(text="answer", usage={"input_tokens": 10, "output_tokens": 2, "total_tokens": 12}))
    tmp = Path(tempfile.mkdtemp())
    (tmp / "empty").mkdir()
    tokens.PACKAGED_TOKENIZER_DIR = tmp / "empty"  # an install without the shipped files
    config = CoreConfig(base_url=srv.url, api_key="k", model="test-model", data_dir=tmp / "d",
                        tokenizer_cache_dir=tmp / "empty", tokenizer_download=False)
    session = await Session.open(config)
    flags = []
    await session.submit(ops.UserTurn(text="hi"))
    async for event in session.events():
        if event.type == "token_count":
            flags.append((event.source, event.total, event.approximate))
        if event.type == "turn_complete":
            break
    await session.close()
    srv.stop()
    print(flags)

asyncio.run(main())
"""


def test_token_count_is_flagged_approximate_without_tokenizer():
    # A fresh process: tiktoken encodings are shared per process once loaded.
    result = subprocess.run(
        [sys.executable, "-c", APPROXIMATE_SCRIPT],
        capture_output=True,
        check=False,
        text=True,
        timeout=60,
        env={k: v for k, v in __import__("os").environ.items() if k != "TIKTOKEN_CACHE_DIR"},
    )
    assert result.returncode == 0, result.stderr
    flags = eval(result.stdout.strip())
    assert flags[0][0] == "estimate" and flags[0][2] is True  # estimated without a tokenizer
    assert flags[-1] == ("api", 12, False)  # the server's own figure is exact


async def test_context_overflow_is_its_own_error_kind(server, make_config):
    server.enqueue(Fault.overflow())
    session = await Session.open(make_config(auto_compact=False, context_window=1000))
    events = await run(session, ops.UserTurn(text="hi"))
    error = of_type(events, "error")[0]
    assert error.kind == "context_overflow"
    await session.close()


def test_importing_core_loads_no_qt():
    code = (
        "import sys, app.core, app.core.session.coordinator, app.core.providers.factory;"
        "bad=[m for m in sys.modules if m.startswith(('PySide6','qasync','shiboken'))];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


async def test_a_consumer_that_falls_behind_gets_joined_deltas_with_the_whole_text(
    server, make_config
):
    """Deltas queued while the consumer is busy arrive joined: fewer events, same text."""
    text = "One two three four five six seven eight nine ten. " * 40
    server.enqueue(Reply(text=text, chunk_size=3))
    session = await Session.open(make_config())
    await session.submit(ops.UserTurn(text="count"))
    # Not reading while the whole reply streams in: every delta waits in the queue.
    await asyncio.wait_for(_until_idle(session), 10)
    events = await collect(session)

    deltas = of_type(events, "agent_message_delta")
    assert "".join(e.delta for e in deltas) == text
    assert len(deltas) < len(text) // 3  # joined, not one event per streamed chunk
    kinds = types(events)
    assert kinds.index("turn_started") < kinds.index("agent_message_delta")
    assert kinds.index("agent_message_delta") < kinds.index("agent_message")
    await session.close()


async def _until_idle(session: Session) -> None:
    """Until the turn has ended with nothing read: its turn_complete waits in the queue."""
    while not any(getattr(e, "type", "") == "turn_complete" for e in session._events._queue):
        await asyncio.sleep(0.01)
