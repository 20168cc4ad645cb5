"""``python -m app.demo`` prints its URL, serves the demo model and exits on Ctrl-C."""

from __future__ import annotations

import re
import signal
import subprocess
import sys

import httpx2


def test_cli_serves_until_interrupted() -> None:
    command = [
        sys.executable,
        "-m",
        "app.demo",
        "--port",
        "0",
        "--tps",
        "0",
        "--context-window",
        "500",
    ]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            match = re.fullmatch(
                r"Coco offline model server listening on (http://127\.0\.0\.1:\d+/v1)\n", line
            )
            assert match, line
            url = match.group(1)
            models = httpx2.get(f"{url}/models", timeout=5).json()
            assert models["data"][0]["id"] == "coco-demo"
            reply = httpx2.post(
                f"{url}/responses", timeout=5, json={"model": "coco-demo", "input": "hello"}
            )
            assert reply.json()["status"] == "completed"
            overflow = httpx2.post(
                f"{url}/responses", timeout=5, json={"model": "coco-demo", "input": "x" * 4000}
            )
            assert overflow.json()["error"]["code"] == "context_length_exceeded"
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=10) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
