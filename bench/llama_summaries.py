"""Real small-model summaries for the junk-summary corpus (issue 39, finding 1).

Not a timing: it asks the shared llama.cpp server (Gemma 3 270M, 4 096-token window) for the
compaction summaries of a few short conversations, sent as the local path sends them (the
instructions, the history, the compaction prompt with its length line, no tools), some of them
holding an earlier summary message or a carried-notes block, as a conversation does after its
first compaction. Each raw answer is written to a JSON file with the conversation it came from,
to be labelled by hand and kept as test data beside
``tests/core/compaction/data/good_summaries.json``: ``gemma_summaries.json`` holds the 30 answers
of 2026-11-28 (26 loops, 2 with the compaction prompt given back, 2 copies of the conversation).

    .venv/bin/python -m bench.llama_summaries OUT.json [--url http://127.0.0.1:PORT/v1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
from pathlib import Path
from typing import Any

from app.core.compaction.notes.block import NOTES_LABEL
from app.core.compaction.prompts import build_prompt, summary_text
from app.core.items import Item, assistant_message, user_message
from app.core.providers.base import ModelRequest
from app.core.providers.chat import ChatCompletionsProvider
from app.core.providers.sampling import sample
from bench._common import setup_env
from bench._llama import llama_server_dir, start_llama, stop_llama

INSTRUCTIONS = "You are Coco, a helpful assistant."
MODEL = "gemma-3-270m"
OUTPUT_LIMIT = 256

EXCHANGES: dict[str, list[tuple[str, str]]] = {
    "billing": [
        ("My name is Ada Lovelace and I lead the billing team.", "Nice to meet you, Ada."),
        ("The staging gateway listens on port 8443.", "Noted: staging is on port 8443."),
        ("Our budget for the migration is $12,500.", "Understood, $12,500 for the migration."),
        ("Which cache should we use? Decide for me.", "We will use Redis 7.2 for the cache."),
    ],
    "python": [
        ("I have a Python script that reads CSV files. It is slow on 2 GB files.",
         "Read it in chunks with pandas.read_csv(chunksize=100_000) or use the csv module."),
        ("I tried chunks, memory is fine now but it takes 4 minutes.",
         "Profile it: most time is usually parsing dates; pass parse_dates only where needed."),
        ("Dates were it. Now 50 seconds. Can we go lower?",
         "Switch to pyarrow: pandas.read_csv(engine='pyarrow') is often 5x faster."),
    ],
    "trip": [
        ("I'm planning a trip to Lisbon in May, 5 days, budget 1,200 euros.",
         "Lisbon in May is lovely. Stay in Alfama or Baixa; trams 28 and 15 are useful."),
        ("I don't eat meat. Where should I eat?",
         "Try Ao 26 Vegan Food Project and Jardim das Cerejas; pastéis de nata are vegetarian."),
        ("Day trip ideas?", "Sintra (40 min by train from Rossio) and Cascais by the sea."),
    ],
    "bug": [
        ("The login page returns 500 after the upgrade to Django 5.1.",
         "Check the logs: a common cause is the removed `django.utils.timezone.utc`."),
        ("Yes, the log says AttributeError: module 'django.utils.timezone' has no attribute 'utc'",
         "Replace it with `datetime.timezone.utc` in accounts/views.py."),
        ("Fixed, thanks. The tests in tests/test_login.py still fail on CSRF.",
         "Use `self.client = Client(enforce_csrf_checks=False)` in the test setup."),
    ],
    "chat": [
        ("hi", "Hello! How can I help you today?"),
        ("tell me a joke", "Why did the scarecrow win an award? He was outstanding in his field."),
        ("another one", "I told my computer a joke about UDP. I'm not sure it got it."),
    ],
}

EARLIER_SUMMARY = (
    "- The user, Ada Lovelace, leads the billing team.\n"
    "- Staging gateway: port 8443. Budget: $12,500.\n"
    "- Decision: Redis 7.2 for the session cache.\n"
    "- Next: plan the cut-over for March 14, 2027."
)


def conversations() -> dict[str, list[Item]]:
    """The histories to summarise: each exchange plain, then some after a first compaction."""
    cases: dict[str, list[Item]] = {}
    for name, turns in EXCHANGES.items():
        items: list[Item] = []
        for ask, answer in turns:
            items += [user_message(ask), assistant_message(answer)]
        cases[name] = items
        cases[f"{name}+summary"] = [user_message(summary_text(EARLIER_SUMMARY)), *items]
        cases[f"{name}+notes"] = [
            user_message(
                f"{NOTES_LABEL} Facts the user stated, in their own words:\n"
                "- The main config lives in /srv/billing/config/app.yaml."
            ),
            user_message(summary_text(EARLIER_SUMMARY)),
            *items,
        ]
    return cases


def _no_notice(*_: Any) -> None:
    """Retries are not reported: the collector only keeps the answers."""


async def collect(url: str, out: Path) -> list[dict[str, Any]]:
    """Each answer is written to ``out`` as it comes (a run takes minutes on a busy machine)."""
    provider = ChatCompletionsProvider(url, "")
    found: list[dict[str, Any]] = []
    try:
        for style in ("handoff", "checkpoint"):
            prompt = build_prompt(None, style, None, words=int(OUTPUT_LIMIT * 0.7))
            for name, items in conversations().items():
                request = ModelRequest(
                    model=MODEL,
                    instructions=INSTRUCTIONS,
                    input=[*items, user_message(prompt)],
                    tools=[],
                    max_output_tokens=OUTPUT_LIMIT,
                    send_empty_tools=True,
                )
                attempt = await sample(
                    provider, request, max_retries=2, base_delay=0.2, on_retry=_no_notice
                )
                text = "".join(
                    part.get("text", "")
                    for item in attempt.items
                    if item.get("type") == "message"
                    for part in item.get("content", [])
                )
                found.append(
                    {"case": f"{name}/{style}", "stop": attempt.stop_reason, "summary": text}
                )
                print(f"{name}/{style}: {text[:100]!r}", flush=True)
                out.write_text(json.dumps(found, indent=1, ensure_ascii=False) + "\n")
    finally:
        await provider.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--url", help="a running llama-server's base URL (…/v1)")
    args = parser.parse_args()
    setup_env()
    if args.url:
        asyncio.run(collect(args.url, args.out))
    else:
        folder = llama_server_dir()
        if folder is None:
            raise SystemExit("no llama.cpp server: ../shared/tools/llama-server is absent")
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        try:
            asyncio.run(collect(start_llama(folder, port, 4096, "lenient"), args.out))
        finally:
            stop_llama(port)


if __name__ == "__main__":
    main()
