"""The carried-notes block: its text as the model reads it, recognising it by its label, and
reading it back out of a history (what the next compaction merges with)."""

from __future__ import annotations

from app.core.compaction.notes.block import (
    COMMANDS_HEADING,
    NOTES_HEADING,
    NOTES_LABEL,
    CarriedOver,
    is_notes_message,
    is_notes_text,
    notes_from_text,
    previous_notes,
)
from app.core.items import assistant_message, user_message

BLOCK = CarriedOver(
    notes=("The flag is billing_rollout_enabled.", "Never deploy on Fridays."),
    files_changed=("app/billing.py",),
    files_read=("README.md", "app/billing.py"),
    commands=("pytest -q -x",),
    dropped=2,
)


def test_the_block_reads_back_into_the_same_lists() -> None:
    text = BLOCK.text()
    assert text.startswith(NOTES_LABEL) and is_notes_text(text)
    assert f"{NOTES_HEADING}\n- The flag is billing_rollout_enabled." in text
    assert f"{COMMANDS_HEADING}\n- `pytest -q -x`" in text  # commands are quoted as code
    back = notes_from_text(text)
    assert back.notes == BLOCK.notes
    assert back.files_changed == BLOCK.files_changed
    assert back.files_read == BLOCK.files_read
    assert back.commands == BLOCK.commands  # the quotes come off again


def test_files_name_each_path_once_changed_first() -> None:
    assert BLOCK.files == ["app/billing.py (changed)", "README.md (read)"]


def test_an_empty_block_says_so_and_its_text_has_no_headings() -> None:
    assert CarriedOver().empty and not BLOCK.empty
    assert NOTES_HEADING not in CarriedOver().text()


def test_the_block_is_recognised_by_its_label_in_either_content_form() -> None:
    item = BLOCK.item()
    assert is_notes_message(item)
    parts = user_message(BLOCK.text())
    parts["content"] = [
        {"type": "input_text", "text": BLOCK.text()},
        {"type": "input_text", "text": "more"},
    ]
    assert is_notes_message(parts)
    assert not is_notes_message(user_message(f"Please keep {NOTES_LABEL} in mind"))
    assert not is_notes_message(assistant_message(BLOCK.text()))  # only a user message


def test_previous_notes_are_the_newest_block_of_the_history() -> None:
    older = CarriedOver(notes=("Port 8080 is taken.",))
    history = [older.item(), user_message("hello"), BLOCK.item(), user_message("again")]
    assert previous_notes(history).notes == BLOCK.notes
    assert previous_notes([user_message("no block here")]) == CarriedOver()


def test_reading_a_block_back_takes_only_the_entries_under_its_headings() -> None:
    lines = (
        "- a stray line before any heading",
        NOTES_HEADING,
        "Some words that are not an entry",
        "- `make` runs the tests, says the user",
        COMMANDS_HEADING,
        "- `pytest -q`",
        "- `",
        "- ``",
    )
    read = notes_from_text("\n".join(lines))
    # Backticks are taken off commands only, and only around something.
    assert read.notes == ("`make` runs the tests, says the user",)
    assert read.commands == ("pytest -q", "`")


def test_a_block_is_recognised_in_any_shape_of_message_content() -> None:
    block = f"{NOTES_LABEL} Kept."
    assert is_notes_message(user_message(block))
    assert is_notes_message({"type": "message", "role": "user", "content": block})
    assert is_notes_message({"type": "message", "role": "user", "content": [block]})
    assert not is_notes_message({"type": "message", "role": "user", "content": {"text": block}})
    assert not is_notes_message({"type": "message", "role": "user"})
    assert not is_notes_message({"type": "message", "role": "user", "content": []})
