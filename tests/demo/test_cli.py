"""``python -m app.demo`` prints its URL, serves the demo model and exits on Ctrl-C."""

from __future__ import annotations

import re
import signal
import subprocess
import sys

import httpx2
import pytest

# A background job of a non-interactive shell starts with SIGINT ignored, and
# its children inherit that: Ctrl-C cannot be tested there.
needs_sigint = pytest.mark.skipif(
    signal.getsignal(signal.SIGINT) == signal.SIG_IGN,
    reason="SIGINT is ignored in this process, so the server's process ignores it too",
)


@needs_sigint
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


# Run as a child: Ctrl-C lands on a thread other than the main one (as the kernel may choose)
# while the main thread waits; the server must still stop and exit 0.
_CTRL_C_ON_ANOTHER_THREAD = r"""
import signal, sys, threading, time
from app.demo import __main__ as cli

main_thread = threading.main_thread()

def main_is_waiting():
    # The main thread is in Event.wait, called from the CLI's main() itself.
    frame = sys._current_frames().get(main_thread.ident)
    names = []
    while frame is not None:
        names.append(frame.f_code.co_name)
        frame = frame.f_back
    return names[:3] == ["wait", "wait", "main"]

def interrupt_from_this_thread():
    while not main_is_waiting():
        time.sleep(0.01)
    signal.pthread_kill(threading.get_ident(), signal.SIGINT)

threading.Thread(target=interrupt_from_this_thread, daemon=True).start()
sys.exit(cli.main(["--port", "0"]))
"""


@needs_sigint
@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="POSIX threads only")
def test_ctrl_c_delivered_to_another_thread_still_stops_the_server() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _CTRL_C_ON_ANOTHER_THREAD],
        check=False, capture_output=True, text=True, timeout=15,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Coco offline model server listening on ")
