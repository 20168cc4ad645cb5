"""The example MCP server's entry for the demo (app/core/tools/mcp/example.py): this Python,
this copy of Coco, its notes in the data folder."""

from __future__ import annotations

import sys
from pathlib import Path

import app
from app.core.tools.mcp.example import EXAMPLE_MODULE, EXAMPLE_SERVER, example_server


def test_the_example_runs_with_this_python_and_finds_this_coco(tmp_path: Path) -> None:
    spec = example_server(tmp_path)
    assert (spec.name, spec.transport, spec.command) == (EXAMPLE_SERVER, "stdio", sys.executable)
    assert spec.args == ("-m", EXAMPLE_MODULE, "--notes-dir", str(tmp_path / "mcp-example"))
    root = Path(dict(spec.env_values())["PYTHONPATH"])
    assert root / "app" == Path(app.__file__).resolve().parent
    assert spec.enabled and not spec.always_allow  # the card asks as for any server
