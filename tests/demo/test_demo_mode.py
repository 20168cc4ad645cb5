"""Demo mode: the offline model answers from the conversation, calls tools, summarises."""

from __future__ import annotations

import json
import math
from typing import Any

import openai
import pytest

from app.demo import Fault, ModelServer, Reply

TOOLS: list[Any] = [
    {"type": "function", "name": name, "parameters": {"type": "object", "properties": {}}}
    for name in ("list_directory", "read_file", "search_text")
]
COMPACTION = {"x-coco-request-kind": "compaction"}
PROMPT = "Write a handoff summary for another model that will resume this task."


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def assistant(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text}],
    }


async def ask(client: openai.AsyncOpenAI, items: list[Any], **kwargs: Any) -> Any:
    stream = await client.responses.create(model="coco-demo", input=items, stream=True, **kwargs)
    events = [event async for event in stream]
    assert events[-1].type == "response.completed"
    return events[-1].response


async def test_reply_acknowledges_the_message_and_refers_to_earlier_ones(
    demo_client: openai.AsyncOpenAI,
) -> None:
    items = [
        user("I am building a birdhouse out of cedar."),
        assistant("Nice."),
        user("Should I paint it?"),
    ]
    response = await ask(demo_client, items)
    text = response.output_text
    assert "Should I paint it?" in text
    assert "birdhouse out of cedar" in text
    assert len(text) > 150  # a few sentences, not a one-liner
    assert response.usage.output_tokens == math.ceil(len(text.encode()) / 4)
    # Deterministic: another server (a fresh model) answers the same input the same way.
    with ModelServer("demo", tokens_per_second=None) as other:
        fresh = openai.AsyncOpenAI(base_url=other.url, api_key="test", max_retries=0)
        assert (await ask(fresh, items)).output_text == text
        await fresh.close()


async def test_the_same_input_asked_again_gets_another_answer(
    demo_client: openai.AsyncOpenAI,
) -> None:
    """A regenerated turn sends its input again: the demo answers it differently each time."""
    items = [user("Should I paint the birdhouse?")]
    first = (await ask(demo_client, items)).output_text
    second = (await ask(demo_client, items)).output_text
    third = (await ask(demo_client, items)).output_text
    assert len({first, second, third}) == 3
    assert second.startswith("Here is another take. (answer 2)") and first in second
    assert third.startswith("Let me put that differently. (answer 3)")
    # A different conversation is a first answer again.
    other = (await ask(demo_client, [user("Should I varnish the birdhouse?")])).output_text
    assert not other.startswith(("Here is", "Let me", "One more"))


async def test_what_did_i_say_first_quotes_the_first_user_message(
    demo_client: openai.AsyncOpenAI,
) -> None:
    items = [
        user("My cat is called Miso."),
        assistant("Cute."),
        user("I live in Lyon."),
        assistant("Noted."),
        user("What did I say first?"),
    ]
    assert "My cat is called Miso." in (await ask(demo_client, items)).output_text


RECALL: list[Any] = [
    {"type": "function", "name": "recall", "parameters": {"type": "object", "properties": {}}}
]


@pytest.mark.parametrize(
    "text",
    [
        "My name is Ada and my server port is 8443. Please remember it.",
        "Remember: the budget is 40k.",
    ],
)
async def test_asking_to_remember_something_is_answered_without_a_search(
    demo_client: openai.AsyncOpenAI, text: str
) -> None:
    response = await ask(demo_client, [user(text)], tools=RECALL)
    assert [item.type for item in response.output] == ["message"]
    assert "no longer in my view" not in response.output_text


async def test_asking_about_something_no_longer_in_view_searches_for_it(
    demo_client: openai.AsyncOpenAI,
) -> None:
    items = [user("Hello."), assistant("Hi."), user("which port did I give you earlier")]
    response = await ask(demo_client, items, tools=RECALL)
    [call] = response.output
    assert call.type == "function_call" and call.name == "recall"
    assert "port" in json.loads(call.arguments)["query"]


async def test_a_summary_message_counts_as_earlier_conversation(
    demo_client: openai.AsyncOpenAI,
) -> None:
    summary = (
        "Another model worked on this task and left this summary; build on it.\n"
        "## What the user asked\n- Plan a trip to Kyoto in April\n- Find cheap trains\n"
    )
    items = [user(summary), user("what did I ask first?")]
    text = (await ask(demo_client, items)).output_text
    assert "Plan a trip to Kyoto in April" in text
    assert "summary" in text.lower()


@pytest.mark.parametrize(
    ("question", "tool", "arguments"),
    [
        ("Can you list the files?", "list_directory", {"path": "."}),
        (
            "Please read README.md",
            "read_file",
            {"path": "README.md", "start_line": 1, "end_line": 200},
        ),
        (
            "show me app/main.py",
            "read_file",
            {"path": "app/main.py", "start_line": 1, "end_line": 200},
        ),
        ("search for compact_locally", "search_text", {"query": "compact_locally", "path": "."}),
    ],
)
async def test_file_questions_call_workspace_tools_when_offered(
    demo_client: openai.AsyncOpenAI, question: str, tool: str, arguments: dict[str, Any]
) -> None:
    response = await ask(demo_client, [user(question)], tools=TOOLS)
    [call] = response.output
    assert call.type == "function_call"
    assert call.name == tool and json.loads(call.arguments) == arguments


async def test_a_long_unbroken_paste_is_answered_and_its_file_name_still_found(
    demo_client: openai.AsyncOpenAI,
) -> None:
    # A pasted hex dump: 20 000 characters without a dot or a space. Finding a file name in it
    # took minutes (every split of the run tried at every position), holding the GIL, so the
    # whole window froze with the demo model.
    dump = "".join("0123456789abcdef"[(i * 7) % 16] for i in range(20_000))
    response = await ask(demo_client, [user(f"show me app/main.py, it printed {dump}")],
                         tools=TOOLS)
    [call] = response.output
    assert call.type == "function_call" and call.name == "read_file"
    assert json.loads(call.arguments)["path"] == "app/main.py"


async def test_without_tools_a_file_question_gets_text(demo_client: openai.AsyncOpenAI) -> None:
    response = await ask(demo_client, [user("list the files please")])
    assert [o.type for o in response.output] == ["message"]
    assert "workspace" in response.output_text


async def test_tool_output_is_described(demo_client: openai.AsyncOpenAI) -> None:
    items = [
        user("list the files"),
        {
            "type": "function_call",
            "name": "list_directory",
            "arguments": '{"path": "."}',
            "call_id": "call_1",
        },
        {
            "type": "function_call_output",
            "call_id": "call_1",
            "output": "README.md\napp/\ntests/\npyproject.toml",
        },
    ]
    text = (await ask(demo_client, items, tools=TOOLS)).output_text
    assert "**4**" in text and "README.md" in text and "pyproject.toml" in text


async def test_listing_header_from_the_real_tool_is_not_counted(
    demo_client: openai.AsyncOpenAI,
) -> None:
    items = [
        user("list the files"),
        {
            "type": "function_call",
            "name": "list_directory",
            "arguments": '{"path": "."}',
            "call_id": "call_1",
        },
        {
            "type": "function_call_output",
            "call_id": "call_1",
            "output": "./ (2 entries)\nREADME.md  (35 bytes)\nsub/",
        },
    ]
    text = (await ask(demo_client, items, tools=TOOLS)).output_text
    assert "**2**" in text and "entries)`" not in text


async def test_code_request_gets_a_fenced_block(demo_client: openai.AsyncOpenAI) -> None:
    text = (await ask(demo_client, [user("write a python function to parse dates")])).output_text
    assert "```python" in text and "def parse_dates(" in text


async def test_compaction_request_returns_a_handoff_summary(
    demo_client: openai.AsyncOpenAI, demo: ModelServer
) -> None:
    items = [
        user("Help me plan a vegetable garden."),
        assistant("Start with tomatoes."),
        user("I only have a balcony, no yard."),
        assistant("Use containers then."),
        user("Which herbs grow well in shade?"),
        user(PROMPT),
    ]
    response = await ask(demo_client, items, tools=TOOLS, extra_headers=COMPACTION)
    text = response.output_text
    assert [o.type for o in response.output] == ["message"]  # never a tool call
    assert "## What the user asked" in text and "## Open items" in text
    for request in (
        "Help me plan a vegetable garden.",
        "I only have a balcony, no yard.",
        "Which herbs grow well in shade?",
    ):
        assert request in text
    assert "Start with tomatoes" in text  # what was answered
    assert PROMPT not in text  # the prompt itself is not a user request
    open_items = text.split("## Open items", 1)[1]
    assert "Which herbs grow well in shade?" in open_items
    assert demo.requests[-1].headers["x-coco-request-kind"] == "compaction"


async def test_checkpoint_prompt_gets_checkpoint_headings(
    demo_client: openai.AsyncOpenAI,
) -> None:
    prompt = (
        "Create a checkpoint summary with the sections Goal, Constraints & Preferences, "
        "Progress, Key Decisions, Next Steps and Critical Context."
    )
    items = [
        user("Refactor the parser. Never break the public API."),
        assistant("On it."),
        user(prompt),
    ]
    text = (await ask(demo_client, items, extra_headers=COMPACTION)).output_text
    for heading in (
        "## Goal",
        "## Constraints & Preferences",
        "## Progress",
        "## Key Decisions",
        "## Next Steps",
        "## Critical Context",
    ):
        assert heading in text
    goal = text.split("## Goal", 1)[1].split("##", 1)[0]
    assert "Refactor the parser" in goal
    constraints = text.split("## Constraints & Preferences", 1)[1].split("##", 1)[0]
    assert "Never break the public API" in constraints


async def test_summary_request_without_header_is_recognised_when_no_tools(
    demo_client: openai.AsyncOpenAI,
) -> None:
    items = [
        user("Explain recursion."),
        assistant("A function calling itself."),
        user("Please write a handoff summary of this conversation."),
    ]
    text = (await ask(demo_client, items)).output_text
    assert "## What the user asked" in text and "Explain recursion." in text


async def test_an_earlier_summary_is_carried_into_the_next_one(
    demo_client: openai.AsyncOpenAI,
) -> None:
    first = await ask(
        demo_client,
        [user("Design a logo for Acme."), assistant("Sure."), user(PROMPT)],
        extra_headers=COMPACTION,
    )
    summary_message = "Another model left this handoff summary:\n" + first.output_text
    items = [
        user("Design a logo for Acme."),
        user(summary_message),
        user("Make it blue."),
        assistant("Blue it is."),
        user(PROMPT),
    ]
    text = (await ask(demo_client, items, extra_headers=COMPACTION)).output_text
    asked = text.split("## What the user asked", 1)[1].split("##", 1)[0]
    assert asked.count("Design a logo for Acme.") == 1  # merged, not duplicated
    assert "Make it blue." in asked


async def test_demo_overflows_above_its_context_window(
    demo_client: openai.AsyncOpenAI, demo: ModelServer
) -> None:
    demo.context_window = 100
    big = [user("tell me about rivers " * 30)]  # ~158 tokens
    with pytest.raises(openai.BadRequestError) as caught:
        await ask(demo_client, big)
    assert caught.value.code == "context_length_exceeded"
    demo.context_window = 4000  # settable at runtime
    assert (await ask(demo_client, big)).output_text


async def test_demo_compact_round_trip_decodes_its_compaction_item(
    demo_client: openai.AsyncOpenAI,
) -> None:
    history = [
        user("My project is called Heron."),
        assistant("Nice name."),
        user("It syncs photos between phones."),
        assistant("Got it."),
    ]
    raw = await demo_client.responses.with_raw_response.compact(model="coco-demo", input=history)
    payload = raw.http_response.json()
    output = payload["output"]
    assert [o["type"] for o in output] == ["message", "message", "compaction"]
    assert output[0]["content"][0]["text"] == "My project is called Heron."
    encrypted = output[-1]["encrypted_content"]
    assert encrypted.startswith("demo-enc:") and "Heron" not in encrypted  # opaque
    assert payload["usage"]["output_tokens"] > 0

    # Only the compaction item carries the first request into the next turn.
    text = (await ask(demo_client, [output[-1], user("What did I say first?")])).output_text
    assert "My project is called Heron." in text
    recap = (await ask(demo_client, [*output, user("Can you recap so far?")])).output_text
    assert "It syncs photos between phones." in recap


async def test_demo_answers_chat_completions_too(demo_client: openai.AsyncOpenAI) -> None:
    chat_tools: list[Any] = [
        {
            "type": "function",
            "function": {
                "name": "list_directory",
                "parameters": {"type": "object", "properties": {}},
            },
        }
    ]
    completion = await demo_client.chat.completions.create(
        model="coco-demo",
        tools=chat_tools,
        messages=[
            {"role": "system", "content": "You are Coco."},
            {"role": "user", "content": "what files are there?"},
        ],
    )
    [call] = completion.choices[0].message.tool_calls or []
    assert call.function.name == "list_directory"
    stream = await demo_client.chat.completions.create(
        model="coco-demo",
        stream=True,
        stream_options={"include_usage": True},
        messages=[
            {"role": "user", "content": "I like jazz."},
            {"role": "assistant", "content": "Great."},
            {"role": "user", "content": "What did I say first?"},
        ],
    )
    chunks = [chunk async for chunk in stream]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert "I like jazz." in text
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0


async def test_queued_items_take_precedence_in_demo_mode(
    demo_client: openai.AsyncOpenAI, demo: ModelServer
) -> None:
    demo.enqueue(Fault.status(503))
    demo.enqueue(Reply(text="scripted in demo"))
    with pytest.raises(openai.InternalServerError):
        await ask(demo_client, [user("hi")])
    assert (await ask(demo_client, [user("hi")])).output_text == "scripted in demo"
    assert "demo model" in (await ask(demo_client, [user("hi")])).output_text


async def test_coco_prompts_and_summary_prefix_are_understood(
    demo_client: openai.AsyncOpenAI,
) -> None:
    """The app's own prompt files: handoff stays handoff, checkpoint gets its sections."""
    from app.core.compaction.prompts import default_prompt, summary_text

    history = [
        user("Port the scheduler to Rust. Keep the CLI flags unchanged."),
        assistant("Started with the parser."),
    ]
    handoff = (await ask(demo_client, [*history, user(default_prompt("handoff"))])).output_text
    assert "## What the user asked" in handoff and "## Goal" not in handoff
    checkpoint = (
        await ask(
            demo_client, [*history, user(default_prompt("checkpoint"))], extra_headers=COMPACTION
        )
    ).output_text
    assert "## Goal" in checkpoint and "Port the scheduler to Rust." in checkpoint

    after = [
        user("Port the scheduler to Rust. Keep the CLI flags unchanged."),
        user(summary_text(handoff)),
        user("What did I ask first?"),
    ]
    first = (await ask(demo_client, after)).output_text
    assert "Port the scheduler to Rust." in first
    assert "Coco context summary" not in first  # the summary is not mistaken for a request
