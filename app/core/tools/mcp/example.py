"""The example MCP server Coco ships (``app/demo/mcp_example.py``), as the offline demo offers
it: started with this Python, finding this copy of Coco, keeping its notes in Coco's data
folder. It is offered only while the demo model is the provider and no server is configured,
and is never written into the user's settings."""

from __future__ import annotations

import sys
from pathlib import Path

from pydantic import SecretStr

from ...mcp_config import McpServerSpec

EXAMPLE_SERVER = "coco-example"
EXAMPLE_MODULE = "app.demo.mcp_example"
NOTES_FOLDER = "mcp-example"  # in the data folder: where its write_note keeps notes.txt
# The folder holding the ``app`` package: the server's Python finds this Coco there (an MCP
# server inherits only a few variables of Coco's environment).
_SOURCE_ROOT = Path(__file__).resolve().parents[4]


# A bundled Coco (PyInstaller: no Python to run ``-m``) runs it when started with this flag
# (``app.main.MCP_EXAMPLE_FLAG``).
FROZEN_FLAG = "--mcp-example-server"


def example_server(data_dir: Path) -> McpServerSpec:
    """The example server's entry, for a session whose data lives in ``data_dir``."""
    notes = ("--notes-dir", str(data_dir / NOTES_FOLDER))
    if getattr(sys, "frozen", False):
        return McpServerSpec(name=EXAMPLE_SERVER, transport="stdio", command=sys.executable,
                             args=(FROZEN_FLAG, *notes))
    return McpServerSpec(
        name=EXAMPLE_SERVER,
        transport="stdio",
        command=sys.executable,
        args=("-m", EXAMPLE_MODULE, *notes),
        env=(("PYTHONPATH", SecretStr(str(_SOURCE_ROOT))),),
    )
