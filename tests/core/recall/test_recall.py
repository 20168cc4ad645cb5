"""The recall index and tool on a real rollout: stemming and identifiers, ranking of what the
model no longer sees, the budget, bad input, and rebuilding from the rollout."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import threading
import time
import weakref
from pathlib import Path

import pytest

from app.core.compaction.prompts import summary_prefix
from app.core.items import assistant_message, function_call_output, user_message
from app.core.recall import RecallTool
from app.core.recall.index import run_in_worker
from app.core.recall.query import build_query
from app.core.recall.store import recall_index_path
from app.core.recall.tool import recall_budget
from app.core.rollout.store import RolloutWriter

FILE_TEXT = "[cluster]\nshardCount = 12\nlisten_port = 8443\n" + "padding line\n" * 400


def write_session(path: Path, tool: RecallTool | None = None) -> RolloutWriter:
    writer = RolloutWriter(path)
    if tool is not None:
        tool.index.follow(writer)
    writer.append("session_meta", {"id": path.stem})
    items = [
        user_message("Please set ORCHARD_SHARD_COUNT to 41 on svc-orchard-41."),
        assistant_message("I decided to use the token bucket limiter for the API."),
        {"type": "function_call", "name": "read_file", "call_id": "c1",
         "arguments": json.dumps({"path": "cluster.toml"})},
        function_call_output("c1", FILE_TEXT),
        user_message("What is the weather like in Lisbon?"),
    ]
    for item in items:
        writer.append("response_item", {"item": item, "turn_id": "t"})
    writer.append(
        "compacted",
        {"message": "", "replacement_history": [
            user_message(f"{summary_prefix()}\nThe user migrates the zebra database on Friday."),
        ]},
    )
    return writer


def make_tool(path: Path, history: list | None = None, window: int | None = 32_000) -> RecallTool:
    return RecallTool(
        path, history=lambda: list(history or []), window=lambda: window,
        count=lambda text: len(text) // 4,
    )


def search(tool: RecallTool, query: str, limit: int = 5) -> tuple[str, bool]:
    result = asyncio.run(tool.search(query, limit))
    return result.output, result.ok


@pytest.fixture
def rollout(tmp_path: Path) -> Path:
    path = tmp_path / "sessions" / "s1.jsonl"
    path.parent.mkdir()
    write_session(path).close()
    return path


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("limit", "token bucket limiter"),  # stemming: limit → limiter
        ("ORCHARD_SHARD_COUNT", "ORCHARD_SHARD_COUNT to 41"),
        ("orchard shard", "ORCHARD_SHARD_COUNT to 41"),  # an identifier's parts
        ("svc-orchard-41", "svc-orchard-41"),
        ("shard", "shardCount = 12"),  # a camelCase identifier's part
        ("listen port", "listen_port = 8443"),  # a tool output read long ago
        ("zebra migration", "migrates the zebra database"),  # an earlier summary
    ],
)
def test_finds_by_stem_identifier_and_part(rollout: Path, query: str, found: str) -> None:
    output, ok = search(make_tool(rollout), query)
    assert ok
    assert found in output, output


def test_hits_say_where_they_come_from(rollout: Path) -> None:
    output, _ = search(make_tool(rollout), "listen_port")
    assert "turn 1 · output of read_file · " in output
    assert "no longer in your view" in output
    output, _ = search(make_tool(rollout), "zebra")
    assert "an earlier compaction summary" in output
    output, _ = search(make_tool(rollout), "Lisbon weather")
    assert "turn 2 · the user's message" in output


def test_what_the_model_sees_ranks_below_what_it_does_not(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with RolloutWriter(path) as writer:
        old = user_message("The staging port is 7001 for the orchard service.")
        writer.append("response_item", {"item": old, "turn_id": "t1"})
        seen = assistant_message("The orchard service port: the port of the orchard service.")
        writer.append("response_item", {"item": seen, "turn_id": "t2"})
        asked = user_message("What was the port of the orchard service?")
        writer.append("response_item", {"item": asked, "turn_id": "t3"})
    # The answer in view echoes the words best, but the old fact comes first; the question
    # that asked is never an answer.
    output, _ = search(make_tool(path, history=[seen, asked]), "port orchard service")
    first, second = output.split("[1] ")[1].split("[2] ")
    assert "7001" in first and "no longer in your view" in first
    assert "The orchard service port" in second and "still in your view" in second
    assert "What was the port" not in output and "[3] " not in output


def test_no_match_says_so(rollout: Path) -> None:
    output, ok = search(make_tool(rollout), "kangaroo")
    assert ok
    assert output == "No earlier part of this conversation matches 'kangaroo'."


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", "the query is empty"),
        ("   ", "the query is empty"),
        ('"', "holds no words to search for"),
        ("* ( ) : ^ -", "holds no words to search for"),
    ],
)
def test_queries_without_words_get_a_clear_answer(rollout: Path, query: str, expected: str) -> None:
    output, ok = search(make_tool(rollout), query)
    assert not ok
    assert expected in output


@pytest.mark.parametrize("query", ['"zebra', "zebra*", "NEAR(zebra", "zebra OR", "AND zebra NOT"])
def test_fts_syntax_is_searched_as_words(rollout: Path, query: str) -> None:
    output, ok = search(make_tool(rollout), query)
    assert ok
    assert "migrates the zebra database" in output


def test_a_huge_query_is_cut_and_says_so(rollout: Path) -> None:
    output, ok = search(make_tool(rollout), "zebra " + "x" * 100_000)
    assert ok
    assert "the query was cut to its first 2000 characters" in output


def test_bad_arguments_are_a_tool_error(rollout: Path) -> None:
    tool = make_tool(rollout)
    for arguments, expected in [
        ("{not json", "invalid JSON arguments for recall"),
        ("{}", "missing required argument: query"),
        ('{"query": 5}', "argument query must be a string"),
        ('{"query": "zebra", "limit": 0}', "argument limit must be at least 1"),
    ]:
        result = asyncio.run(tool.call(arguments))
        assert not result.ok and expected in result.output


def test_the_answer_stays_within_the_budget_of_the_window(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with RolloutWriter(path) as writer:
        for n in range(30):
            text = f"Note {n}: the orchard cache " + "grows and shrinks again " * 60
            writer.append("response_item", {"item": user_message(text), "turn_id": f"t{n}"})
    for window in (4096, 32_000, 400_000):
        tool = make_tool(path, window=window)
        output, ok = search(tool, "orchard cache", limit=10)
        assert ok
        assert len(output) // 4 <= recall_budget(window)
    assert recall_budget(4096) == 256 and recall_budget(400_000) == 4000
    # A small window gets fewer excerpts than it asked for; a large one all ten.
    assert output.count("\n[") == 10
    small, _ = search(make_tool(path, window=4096), "orchard cache", limit=10)
    assert small.count("\n[") < 10


def test_index_lives_beside_the_rollout_and_is_smaller(rollout: Path) -> None:
    tool = make_tool(rollout)
    search(tool, "zebra")
    assert tool.index.path == recall_index_path(rollout) == rollout.with_name("s1.recall.sqlite")
    assert tool.index.path.exists()


def test_index_follows_appends_and_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    tool = make_tool(path)
    writer = write_session(path, tool)
    writer.append("response_item", {"item": user_message("The quokka is the mascot."),
                                    "turn_id": "t9"})
    output, _ = search(tool, "quokka")
    assert "quokka is the mascot" in output
    tool.index.close()
    writer.close()
    # Another writer adds a record while the session is closed: the reopened index catches up.
    with RolloutWriter(path) as other:
        other.append("response_item", {"item": user_message("Wombats dig burrows."),
                                       "turn_id": "t10"})
    records = sum(1 for line in path.read_text().splitlines() if line.strip())
    reopened = make_tool(path)
    reopened.index.follow(RolloutWriter(path), records=records)
    output, _ = search(reopened, "wombat burrow")
    assert "Wombats dig burrows" in output
    output, _ = search(reopened, "quokka")
    assert output.count("quokka is the mascot") == 1  # indexed once, not again


def test_appends_are_indexed_in_the_background_by_one_worker_started_once(
    tmp_path: Path,
) -> None:
    # Starting a thread makes the caller wait until it runs: the session's appends (on the
    # window's thread) hand their records to the one recall worker, which stays for the next.
    sessions = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.jsonl"
        tool = make_tool(path)
        writer = write_session(path, tool)
        writer.append("response_item", {"item": user_message(f"The {name}quokka is the mascot."),
                                        "turn_id": "t9"})
        sessions.append((name, tool, writer))
    done = threading.Event()
    run_in_worker(done.set)  # the worker runs jobs in order: what was queued before is done
    assert done.wait(timeout=120)  # a hang guard only
    workers = [t for t in threading.enumerate() if t.name == "recall-index"]
    assert len(workers) == 1 and workers[0].is_alive()  # waiting for the next job
    for name, tool, writer in sessions:
        assert not tool.index._working and not tool.index._pending  # indexed already
        output, _ = search(tool, f"{name}quokka")
        assert f"{name}quokka is the mascot" in output
        writer.append("response_item", {"item": user_message(f"More {name}wombats."),
                                        "turn_id": "t10"})
        output, _ = search(tool, f"{name}wombats")
        assert f"More {name}wombats" in output
        tool.index.close()
        writer.close()
    assert [t for t in threading.enumerate() if t.name == "recall-index"] == workers


def test_a_deleted_index_is_rebuilt_from_the_rollout(rollout: Path) -> None:
    tool = make_tool(rollout)
    search(tool, "zebra")
    tool.index.close()
    recall_index_path(rollout).unlink()
    output, _ = search(make_tool(rollout), "limiter")
    assert "token bucket limiter" in output
    assert recall_index_path(rollout).exists()


def test_a_damaged_index_is_rebuilt_and_says_so(rollout: Path) -> None:
    tool = make_tool(rollout)
    search(tool, "zebra")
    tool.index.close()
    recall_index_path(rollout).write_bytes(b"this is not a database" * 200)
    fresh = make_tool(rollout)
    output, ok = search(fresh, "limiter")
    assert ok and "token bucket limiter" in output
    assert "the search index was damaged and has been rebuilt" in output
    with sqlite3.connect(recall_index_path(rollout)) as conn:  # a real index again
        assert conn.execute("SELECT value FROM meta WHERE key = 'records'").fetchone()


def test_an_index_damaged_while_open_is_rebuilt(rollout: Path) -> None:
    tool = make_tool(rollout)
    search(tool, "zebra")
    path = recall_index_path(rollout)
    data = bytearray(path.read_bytes())
    data[4096:] = b"\xff" * (len(data) - 4096)  # every page after the first overwritten
    path.write_bytes(bytes(data))
    output, ok = search(tool, "limiter")
    assert ok and "token bucket limiter" in output


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_gets_an_index_in_memory(rollout: Path) -> None:
    folder = rollout.parent
    folder.chmod(0o555)
    try:
        output, ok = search(make_tool(rollout), "limiter")
    finally:
        folder.chmod(0o755)
    assert ok and "token bucket limiter" in output
    assert "could not be saved beside the conversation" in output
    assert "it was built in memory" in output
    assert not recall_index_path(rollout).exists()


def test_an_index_that_cannot_be_a_file_is_kept_in_memory(rollout: Path) -> None:
    recall_index_path(rollout).mkdir()  # something else is in the way (root ignores modes)
    output, ok = search(make_tool(rollout), "limiter")
    assert ok and "token bucket limiter" in output
    assert "it was built in memory" in output


def test_recall_outputs_are_not_indexed_again(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with RolloutWriter(path) as writer:
        writer.append("response_item", {"item": user_message("The otter sleeps."), "turn_id": "a"})
        call = {"type": "function_call", "name": "recall", "call_id": "r1",
                "arguments": json.dumps({"query": "otter"})}
        writer.append("response_item", {"item": call, "turn_id": "b"})
        writer.append("response_item", {"item": function_call_output("r1", "The otter sleeps."),
                                        "turn_id": "b"})
    output, _ = search(make_tool(path), "otter sleeps")
    assert output.count("The otter sleeps.") == 1


def test_query_building_quotes_every_word() -> None:
    query = build_query('zebra" OR NEAR(x* ORCHARD_SHARD_COUNT svc41')
    assert query is not None
    assert query.match == (
        '"zebra" AND "x" AND "orchard shard count" AND ("svc41" OR "svc 41")'
    )
    assert build_query("?!*") is None


def test_the_worker_keeps_no_job_alive_while_it_waits() -> None:
    # A job is an index's bound method: held by the waiting worker, it kept a closed
    # session's index (its records, its database connection) alive until the next job.
    class Job:
        def __init__(self) -> None:
            self.ran = threading.Event()

        def __call__(self) -> None:
            self.ran.set()

    job = Job()
    ran, gone = job.ran, weakref.ref(job)
    run_in_worker(job)
    del job
    assert ran.wait(timeout=120)  # a hang guard only
    deadline = time.monotonic() + 30  # a hang guard only: the worker drops it as it returns
    while gone() is not None and time.monotonic() < deadline:
        time.sleep(0.001)
    assert gone() is None


async def test_a_call_of_a_server_tool_not_offered_now_says_its_server_is_not_running(
    tmp_path: Path,
) -> None:
    """The model calls an MCP tool whose server is still starting (or stopped, or turned off):
    it is told that, not that no workspace folder is configured."""
    from app.core.config import CoreConfig
    from app.core.recall.tool import SessionTools

    tools = SessionTools(CoreConfig(data_dir=tmp_path, model="demo", recall=False), None)  # type: ignore[arg-type]
    result = await tools.call("mcp__notes__write_note", '{"text": "x"}')
    assert not result.ok
    assert result.output == (
        "the tool 'mcp__notes__write_note' is not available now: its MCP server is not running "
        "(still starting, stopped after an error, or turned off)"
    )
    assert (await tools.call("write_note", "{}")).output == "unknown tool: 'write_note'"
