"""The file name suggested when a session is exported: words and hyphens, bounded, portable."""

from __future__ import annotations

import re

import pytest

from app.ui.sessions.export import EXPORT_NAME_LIMIT, export_file_name

# What Windows, macOS and Linux refuse or mangle in a file name.
UNSAFE = re.compile(r'[<>:"/\\|?*\x00-\x1f\s]')


def test_the_issue_title_loses_its_punctuation_and_cut_word() -> None:
    title = "Hello! Can you show me a Python code block and a markdown li…"
    assert export_file_name(title) == "Hello-Can-you-show-me-a-Python-code-block-and-a-markdown.md"
    assert export_file_name(title, "json").endswith("-markdown.json")


@pytest.mark.parametrize(
    "title",
    [
        "Hello_ Can you show me … markdown li",
        'What is "C:\\temp\\a<b>|c?*" anyway?',
        "Tabs\tand\nnewlines\r\nand trailing dots...",
        "  ..leading dots and spaces  ",
        "Résumé: Zürich — 東京 trip",
        "x" * 300,
        " ".join(["word"] * 80),
    ],
)
def test_names_are_portable_and_bounded(title: str) -> None:
    name = export_file_name(title)
    stem = name.removesuffix(".md")
    assert name.endswith(".md") and stem
    assert not UNSAFE.search(name)
    assert len(stem) <= EXPORT_NAME_LIMIT
    assert not stem.startswith(("-", ".")) and not stem.endswith(("-", "."))
    assert "--" not in stem


def test_long_titles_are_cut_at_a_word() -> None:
    name = export_file_name("Planning a four day trip to Lisbon in May with my sister who is "
                            "vegetarian and likes museums")
    stem = name.removesuffix(".md")
    assert len(stem) <= EXPORT_NAME_LIMIT
    assert stem == "Planning-a-four-day-trip-to-Lisbon-in-May-with-my-sister-who"


def test_letters_of_any_script_are_kept() -> None:
    assert export_file_name("Résumé: Zürich — 東京 trip") == "Résumé-Zürich-東京-trip.md"


@pytest.mark.parametrize(("title", "expected"), [
    ("", "coco-session.md"), ("???", "coco-session.md"), ("…", "coco-session.md"),
    ("CON", "CON-session.md"), ("nul", "nul-session.md"), ("com1", "com1-session.md"),
    ("CON notes", "CON-notes.md"),
])
def test_empty_and_windows_reserved_names_get_a_usable_name(title: str, expected: str) -> None:
    assert export_file_name(title) == expected
