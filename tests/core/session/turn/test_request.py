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


def test_the_tools_and_the_reasoning_fields_come_from_the_settings_in_force(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    plain, _, held = requests_for(tmp_path, workspace=workspace)
    request = plain.build()
    names = [str(spec.get("name") or spec.get("function", {}).get("name")) for spec in
             request.tools or []]
    assert "read_file" in names  # the workspace's tools
    assert request.reasoning_effort is None and request.include_encrypted_reasoning is False
    held["config"] = held["config"].model_copy(update={"reasoning_effort": "high"})
    request = plain.build()  # the settings read at each request, not kept from the first
    assert request.reasoning_effort == "high" and request.include_encrypted_reasoning is True


def test_a_tools_image_is_described_to_a_model_that_does_not_take_images(
    tmp_path: Path,
) -> None:
    image = {"type": "attachment", "kind": "image", "name": "shot.png", "size": 10,
             "width": 4, "height": 3, "file": "ab.png", "tokens": 85}
    output = {"type": "function_call_output", "call_id": "c1", "output": "a screenshot",
              "coco_images": [image]}
    call = function_call("shot", "{}", "c1")
    blind, _, _ = requests_for(tmp_path, accepts_images=False)
    (_, sent) = blind.build([call, output]).input
    assert "coco_images" not in sent and "shot.png" in str(sent["output"])
    assert sent["output"] != "a screenshot"  # described in its text: no image part
    seeing, _, _ = requests_for(tmp_path, accepts_images=True)
    (_, sent) = seeing.build([call, output]).input
    assert sent["output"] != blind.build([call, output]).input[1]["output"]
