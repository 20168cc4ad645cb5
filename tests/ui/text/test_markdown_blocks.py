"""Where a Markdown text divides into closed blocks (``markdown_blocks``): the cut points the
streaming document and the display segments of a long message use, and where they never fall."""

from __future__ import annotations

import pytest

from app.ui.text.markdown_blocks import FENCE_OPEN, closed_end


def test_a_new_paragraph_after_a_blank_line_closes_the_one_before() -> None:
    text = "First paragraph\nstill first.\n\nSecond.\n"
    assert closed_end(text) == text.index("Second.")
    # Further cuts go on from an earlier one; none after it returns it unchanged.
    longer = text + "\nThird.\n"
    assert closed_end(longer, closed_end(longer)) == longer.index("Third.")
    assert closed_end(text, text.index("Second.")) == text.index("Second.")


def test_an_unfinished_line_decides_nothing() -> None:
    assert closed_end("para\n\nno newline yet") == 0


@pytest.mark.parametrize(
    "text",
    [
        "```\ncode\n\nstill code\n```\n",  # inside a fence
        "~~~~\ncode\n\n~~~\nstill code\n",  # a shorter run does not close it
        "- one\n\n- two\n",  # a list item may continue the list above
        "1. one\n\n2) two\n",
        "para\n\n    indented code\n",  # an indented line may continue a list
        "| a | b |\n|---|---|\n\nafter the table\n",  # Qt joins after a table otherwise
    ],
)
def test_no_cut_where_rendering_in_parts_could_differ(text: str) -> None:
    assert closed_end(text) == 0


def test_no_cut_right_after_a_thematic_break() -> None:
    text = "para\n\n---\n\nafter the rule\n"
    assert closed_end(text) == text.index("---")


def test_a_closed_fence_is_a_block_like_any_other() -> None:
    text = "```python\nx = 1\n\ny = 2\n```\n\nAfter the code.\n"
    assert closed_end(text) == text.index("After the code.")


def test_fence_openings() -> None:
    assert FENCE_OPEN.match("```python").group(1) == "```"  # type: ignore[union-attr]
    assert FENCE_OPEN.match("   ~~~~").group(1) == "~~~~"  # type: ignore[union-attr]
    assert FENCE_OPEN.match("``not a fence") is None
    assert FENCE_OPEN.match("    ```") is None  # four spaces: an indented code line
