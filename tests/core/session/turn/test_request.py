"""The requests a turn sends (``app.core.session.turn.request``): fields from the settings in force,
every tool call paired, and who compacts: the server inside the response, or Coco."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.core import CoreConfig
from app.core.attachments.session_files import SessionAttachments
from app.core.conversation.history import ContextHistory
from app.core.items import function_call, user_message
from app.core.recall import SessionTools
from app.core.session.turn.request import TurnRequests
from app.core.tokens.counter import TokenCounter


def requests_for(
    tmp_path: Path, limit: int | None = 9000, **overrides: Any
) -> tuple[TurnRequests, ContextHistory, dict[str, CoreConfig]]:
    values: dict[str, Any] = {
        "base_url": "http://localhost:1/v1", "api_key": "k", "model": "m",
        "instructions": "Be brief.", "data_dir": tmp_path,
    }
    values.update(overrides)
    held = {"config": CoreConfig(**values)}
    history = ContextHistory(TokenCounter("gpt-4o", allow_download=False))
    tools = SessionTools(held["config"], None)  # type: ignore[arg-type]  # recall is off
    requests = TurnRequests(
        "sid", config=lambda: held["config"], history=history, tools=lambda: tools,
        limit=lambda: limit, attachments=SessionAttachments(tmp_path / "sid.files", len),
    )
    return requests, history, held


def test_a_turn_request_sends_the_history_with_every_call_answered(tmp_path: Path) -> None:
    requests, history, _ = requests_for(tmp_path, recall=False)
    history.append(user_message("read it"))
    history.append(function_call("read_file", "{}", "c1"))  # its output never came (a crash)
    request = requests.build(turn=True)
    assert (request.model, request.instructions, request.prompt_cache_key) == (
        "m", "Be brief.", "sid"
    )
    kinds = [item.get("type", "message") for item in request.input]
    assert kinds == ["message", "function_call", "function_call_output"]
    assert len(history) == 2  # the history itself is untouched
    assert requests.build([user_message("only this")]).input == [user_message("only this")]


def test_the_server_compacts_inside_the_response_only_where_it_can(tmp_path: Path) -> None:
    on = {"server_side_compaction": True, "remote_compaction": True, "wire_api": "responses"}
    requests, _, _ = requests_for(tmp_path, **on)
    assert requests.server_compaction() == [{"type": "compaction", "compact_threshold": 9000}]
    assert requests.build(turn=True).context_management is not None
    assert requests.build().context_management is None  # a compaction's own request
    assert not requests.client_compacts()  # the server would always come first
    chat, _, _ = requests_for(tmp_path, **{**on, "wire_api": "chat"})
    assert chat.server_compaction() is None and chat.client_compacts()
    no_limit, _, _ = requests_for(tmp_path, limit=None, **on)
    assert no_limit.server_compaction() is None
    manual, _, _ = requests_for(tmp_path, auto_compact=False)
    assert not manual.client_compacts()


def test_the_environment_block_starts_a_history_only_with_a_workspace(tmp_path: Path) -> None:
    without, _, _ = requests_for(tmp_path)
    assert without.initial_context() == []
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with_ws, _, _ = requests_for(tmp_path, workspace=workspace)
    (block,) = with_ws.initial_context()
    assert str(workspace) in block["content"][0]["text"]
