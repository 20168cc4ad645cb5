"""The compaction prompts as Coco ships them."""

from __future__ import annotations

import itertools

import pytest

from app.core.compaction.prompts import default_prompt


@pytest.mark.parametrize("style", ["handoff", "checkpoint"])
def test_the_default_prompts_have_no_hard_line_breaks_inside_a_paragraph(style: str) -> None:
    # Settings shows the default prompt in a box that wraps it at its own width: a line cut
    # at 100 characters in the file showed as ragged hard breaks there.
    import re

    lines = default_prompt(style).split("\n")
    for line, after in itertools.pairwise(lines):
        if line.strip() and after.strip():
            assert line.lstrip().startswith("#") or re.match(r"\s*([-*]|\d+\.)\s", after), (
                f"a paragraph broken after {line!r}"
            )
