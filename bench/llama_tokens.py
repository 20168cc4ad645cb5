"""Coco's token estimate against a real llama.cpp server's count, raw and calibrated.

Not a timing: the figures behind issue 14 item 3. For English prose and for repetitive CJK text,
with and without the workspace tool definitions, it builds a request as the session does
(instructions + items in a ``ContextHistory`` counted by a loaded ``TokenCounter``, plus the tool
definitions), sends it to the shared llama-server on the Chat Completions wire (one output token)
and reads ``usage.prompt_tokens``. The calibration learns from the first request of each
language (:mod:`app.core.tokens.calibration`) and is then compared on the others.

    .venv/bin/python -m bench.llama_tokens [--url http://127.0.0.1:PORT/v1]

Without ``--url`` it starts ``../shared/tools/llama-server/start.sh`` on a free port (or the
folder in ``COCO_LLAMA_SERVER_DIR``) and stops it at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import tempfile
from pathlib import Path

from app.core.conversation.history import ContextHistory
from app.core.items import user_message
from app.core.providers.base import Completed, ModelRequest
from app.core.providers.chat import ChatCompletionsProvider
from app.core.tokens.calibration import Calibration, request_estimate
from app.core.tokens.counter import TokenCounter
from app.core.tools.workspace import WorkspaceTools
from bench._common import REPO, setup_env

INSTRUCTIONS = "You are Coco, a helpful assistant."
ENGLISH = [
    "The quick brown fox jumps over the lazy dog while the farmer watches from the porch. " * n
    for n in (12, 30, 60)
] + [
    "Compaction replaces an old conversation with a summary so the model keeps working within "
    "its context window; the summary must keep decisions, open questions and file names. " * 25
]
CJK = ["今天天气很好，我们去公园散步吧。" * n for n in (40, 100, 200)] + ["日本語の文章です。" * 150]


def server_dir() -> Path:
    env = os.environ.get("COCO_LLAMA_SERVER_DIR")
    if env:
        return Path(env)
    beside = REPO.parent / "shared" / "tools" / "llama-server"
    return beside if beside.is_dir() else Path("/work/shared/tools/llama-server")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def reported_prompt_tokens(
    provider: ChatCompletionsProvider, texts: list[str], tools: list[dict[str, object]]
) -> int:
    request = ModelRequest(
        model="gemma-3-270m",
        instructions=INSTRUCTIONS,
        input=[user_message(text) for text in texts],
        tools=tools,
        max_output_tokens=1,
    )
    async for event in provider.stream(request):
        if isinstance(event, Completed) and event.usage is not None:
            return event.usage.input_tokens
    raise RuntimeError("no usage reported")


async def measure(url: str, workspace: Path) -> None:
    counter = TokenCounter("gemma-3-270m", Path(os.environ["TIKTOKEN_CACHE_DIR"]))
    counter.wait_ready(30)
    provider = ChatCompletionsProvider(url, "")
    print(f"{'text':<10}{'tools':<7}{'coco':>7}{'server':>8}{'raw err':>9}{'calibrated':>12}"
          f"{'cal err':>9}")
    try:
        for name, texts in (("english", ENGLISH), ("cjk", CJK)):
            for with_tools in (False, True):
                tools = WorkspaceTools(workspace if with_tools else None).specs()
                calibration = Calibration()
                for index, text in enumerate(texts):
                    history = ContextHistory(counter, INSTRUCTIONS)
                    history.append(user_message(text))
                    estimate = request_estimate(
                        counter.count, instructions_and_items=history.estimate(), tools=tools
                    )
                    reported = await reported_prompt_tokens(provider, [text], tools)
                    calibrated = calibration.apply(estimate)
                    raw_err = (estimate - reported) / reported * 100
                    cal = f"{calibrated:>12}{(calibrated - reported) / reported * 100:>+8.1f}%"
                    print(
                        f"{name:<10}{'yes' if with_tools else 'no':<7}{estimate:>7}{reported:>8}"
                        f"{raw_err:>+8.1f}%" + (cal if index else f"{'(learns)':>12}")
                    )
                    calibration = calibration.observed(estimate, reported)
    finally:
        await provider.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running llama-server's base URL (…/v1)")
    args = parser.parse_args()
    setup_env()
    with tempfile.TemporaryDirectory(prefix="coco-llama-tokens-") as tmp:
        workspace = Path(tmp)
        (workspace / "notes.txt").write_text("alpha\n")
        if args.url:
            asyncio.run(measure(args.url, workspace))
            return
        port = free_port()
        work = Path(os.environ.get("LLAMA_WORK") or Path(tempfile.gettempdir()) / "coco-llama")
        start = subprocess.run(
            [str(server_dir() / "start.sh"), str(port), "8192", "lenient"],
            capture_output=True, text=True, check=True,
        )
        try:
            asyncio.run(measure(start.stdout.strip().splitlines()[-1], workspace))
        finally:
            pid = int((work / f"server-{port}.pid").read_text())
            os.kill(pid, 15)


if __name__ == "__main__":
    main()
