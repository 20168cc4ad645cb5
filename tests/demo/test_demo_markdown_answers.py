"""The demo's first impression: ordinary requests get plausible Markdown (headings, lists, code
in the language asked, tables), and only real questions about files are treated as such."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from markdown_it import MarkdownIt

from tests.demo.test_demo_mode import TOOLS, ask, assistant, user

ISSUE_REQUEST = "Hello! Can you show me a Python code block and a markdown list?"


def blocks(text: str) -> list[tuple[str, str]]:
    """(token type, fence language) of the Markdown blocks in ``text``, parsed as Coco's
    transcript parses it (CommonMark with tables)."""
    md = MarkdownIt("commonmark").enable(["table"])
    return [(t.type, t.info.strip()) for t in md.parse(text) if t.nesting != -1]


def kinds(text: str) -> set[str]:
    return {kind for kind, _info in blocks(text)}


def fences(text: str) -> list[str]:
    return [info for kind, info in blocks(text) if kind == "fence"]


async def test_the_issue_request_gets_python_code_and_a_list_not_the_workspace_answer(
    demo_client: openai.AsyncOpenAI,
) -> None:
    for tools in ([], TOOLS):
        response = await ask(demo_client, [user(ISSUE_REQUEST)], tools=tools)
        assert [o.type for o in response.output] == ["message"]  # no tool call either
        text = response.output_text
        assert "workspace" not in text and "files" not in text
        assert fences(text) == ["python"]
        assert {"heading_open", "bullet_list_open"} <= kinds(text)
        assert "Python code block and a bulleted list" in text  # says what it is giving


@pytest.mark.parametrize(
    ("request_text", "language"),
    [
        ("Write a Rust function to add two numbers", "rust"),
        ("Can you show me a binary tree in Go?", "go"),
        ("An example in JavaScript of debouncing, please", "javascript"),
        ("SQL query to find the ten newest orders (code please)", "sql"),
        ("Give me a Java class for a bank account", "java"),
        ("a bash script that backs up my photos", "bash"),
        ("Let's go: write a function to add numbers", "python"),  # "go" the verb
    ],
)
async def test_code_comes_in_the_language_asked(
    demo_client: openai.AsyncOpenAI, request_text: str, language: str
) -> None:
    text = (await ask(demo_client, [user(request_text)])).output_text
    assert fences(text) == [language]


@pytest.mark.parametrize(
    "request_text",
    ["What is the function of the liver?", "What class should I take this autumn?",
     "Which HTTP headers should I send?", "How do I render a 3D scene?"],
)
async def test_words_that_only_sound_like_code_get_no_code_block(
    demo_client: openai.AsyncOpenAI, request_text: str
) -> None:
    text = (await ask(demo_client, [user(request_text)])).output_text
    assert fences(text) == []
    assert "heading_open" in kinds(text)


async def test_a_requested_table_is_a_real_markdown_table(demo_client: openai.AsyncOpenAI) -> None:
    text = (await ask(demo_client, [user("Make a table comparing Python and Rust for a CLI tool")])
            ).output_text
    assert "table_open" in kinds(text)
    assert "| Aspect | Python | Rust |" in text
    assert text.startswith("## Python vs Rust")
    plain = (await ask(demo_client, [user("Put my reading goals for the summer in a table")])
             ).output_text
    assert "table_open" in kinds(plain)
    assert "Reading" in plain  # the rows come from the request


async def test_numbered_lists_and_checklists_when_asked(demo_client: openai.AsyncOpenAI) -> None:
    steps = (await ask(demo_client, [user("Give me a numbered list of steps to bake bread")])
             ).output_text
    assert "ordered_list_open" in kinds(steps)
    checklist = (await ask(demo_client, [user("I need a checklist for moving house")])
                 ).output_text
    assert "- [ ] " in checklist and "bullet_list_open" in kinds(checklist)
    assert checklist.startswith("## Moving house")


async def test_asking_for_markdown_shows_every_element(demo_client: openai.AsyncOpenAI) -> None:
    text = (await ask(demo_client, [user("Show me some markdown")])).output_text
    assert {"heading_open", "bullet_list_open", "ordered_list_open", "table_open", "fence",
            "blockquote_open"} <= kinds(text)


async def test_an_ordinary_question_gets_a_heading_and_a_plan(
    demo_client: openai.AsyncOpenAI,
) -> None:
    items = [user("I keep bees on my roof."), assistant("Nice."),
             user("How do I make sourdough bread at home?")]
    text = (await ask(demo_client, items)).output_text
    assert text.startswith("### Sourdough bread\n")
    assert "How do I make sourdough bread at home?" in text
    assert "I keep bees on my roof." in text  # it still refers back
    assert "ordered_list_open" in kinds(text)


@pytest.mark.parametrize(
    "request_text",
    [
        "Can you explain a binary tree?",
        "Make a markdown list of fruits",
        "Look for a good hotel in Rome for me",
        "Where is the best place to find ideas?",
        "What are the pros and cons of Node.js?",
        "List three reasons to learn Rust",
    ],
)
async def test_ordinary_requests_are_not_file_requests(
    demo_client: openai.AsyncOpenAI, request_text: str
) -> None:
    for tools in ([], TOOLS):
        response = await ask(demo_client, [user(request_text)], tools=tools)
        assert [o.type for o in response.output] == ["message"]
        assert "Open a workspace folder" not in response.output_text


@pytest.mark.parametrize(
    ("request_text", "arguments"),
    [
        ("grep for compact_locally in app", {"query": "compact_locally", "path": "app"}),
        ("find where parse_config is defined", {"query": "parse_config", "path": "."}),
        ("search the files for 'retry budget'", {"query": "retry budget", "path": "."}),
    ],
)
async def test_code_searches_still_call_the_search_tool(
    demo_client: openai.AsyncOpenAI, request_text: str, arguments: dict[str, Any]
) -> None:
    response = await ask(demo_client, [user(request_text)], tools=TOOLS)
    [call] = response.output
    assert call.type == "function_call" and call.name == "search_text"
    assert json.loads(call.arguments) == arguments


async def test_a_real_file_question_without_a_workspace_still_says_so(
    demo_client: openai.AsyncOpenAI,
) -> None:
    for question in ("list the files please", "read app/main.py"):
        text = (await ask(demo_client, [user(question)])).output_text
        assert "Open a workspace folder" in text
