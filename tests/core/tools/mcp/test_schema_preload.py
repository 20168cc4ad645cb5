"""A server whose tools declare an output schema: what the SDK needs to check their results
(jsonschema, 80-90 ms to import) is imported in a worker thread once the server is ready, not
on the event loop's thread at the first call. Run in a fresh interpreter, where nothing has
imported it yet."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

FAULT_SERVER = Path(__file__).with_name("fault_server.py")
REPO = Path(__file__).parents[4]

SCRIPT = """
import asyncio, json, sys, threading
from app.core.mcp_config import parse_server
from app.core.tools.mcp.connection import McpConnection

importers = {}

class Spy:
    def find_spec(self, name, path=None, target=None):
        if name == "jsonschema":
            importers.setdefault(name, threading.current_thread().name)
        return None

sys.meta_path.insert(0, Spy())

async def main():
    conn = McpConnection(parse_server("faulty", {"command": sys.executable,
                                                 "args": [sys.argv[1]], "timeout": 30}),
                         lambda: None)
    conn.start()
    assert await conn.ensure_ready() is None
    schemas = [t.name for t in conn.tools if t.output_schema]
    for _ in range(1000):  # the worker's import is under way (never started: the call imports)
        if "jsonschema" in sys.modules or importers:
            break
        await asyncio.sleep(0.01)
    result = await conn.call("echo", {"text": "hi"})
    await conn.stop()
    print(json.dumps({"importer": importers.get("jsonschema"), "schemas": schemas,
                      "output": result.output}))

asyncio.run(main())
"""


def test_the_schema_checker_is_imported_off_the_loop_thread_before_the_first_call() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(FAULT_SERVER)], cwd=REPO, capture_output=True,
        text=True, check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert "echo" in seen["schemas"]  # a str-returning tool declares one
    assert seen["output"] == "echo: hi"
    assert seen["importer"] is not None and seen["importer"] != "MainThread"
