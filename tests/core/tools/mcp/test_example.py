"""The example MCP server's entry for the demo (app/core/tools/mcp/example.py): this Python,
this copy of Coco, its notes in the data folder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import app
from app.core.tools.mcp.example import EXAMPLE_MODULE, EXAMPLE_SERVER, example_server


def test_the_example_runs_with_this_python_and_finds_this_coco(tmp_path: Path) -> None:
    spec = example_server(tmp_path)
    assert (spec.name, spec.transport, spec.command) == (EXAMPLE_SERVER, "stdio", sys.executable)
    assert spec.args == ("-m", EXAMPLE_MODULE, "--notes-dir", str(tmp_path / "mcp-example"))
    root = Path(dict(spec.env_values())["PYTHONPATH"])
    assert root / "app" == Path(app.__file__).resolve().parent
    assert spec.enabled and not spec.always_allow  # the card asks as for any server


def test_a_bundled_coco_runs_the_example_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.main import MCP_EXAMPLE_FLAG

    monkeypatch.setattr(sys, "frozen", True, raising=False)
    spec = example_server(tmp_path)
    assert spec.command == sys.executable and spec.env == ()
    assert spec.args == (MCP_EXAMPLE_FLAG, "--notes-dir", str(tmp_path / "mcp-example"))


async def test_coco_started_with_the_flag_is_the_example_server(tmp_path: Path) -> None:
    # What a bundle runs, through app.main as its entry point: the server answers over stdio.
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from app.main import MCP_EXAMPLE_FLAG

    code = f"import sys; from app.main import main; sys.exit(main({[MCP_EXAMPLE_FLAG]!r} + sys.argv[1:]))"
    root = str(Path(app.__file__).resolve().parents[1])
    params = StdioServerParameters(command=sys.executable,
                                   args=["-c", code, "--notes-dir", str(tmp_path)],
                                   env={"PYTHONPATH": root})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {tool.name for tool in (await session.list_tools()).tools}
        assert tools == {"word_count", "roll_dice", "write_note"}
        result = await session.call_tool("write_note", {"text": "hello"})
        assert not result.is_error
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "hello\n"
