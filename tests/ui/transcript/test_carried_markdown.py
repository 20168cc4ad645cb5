"""The carried notes as the expanded compaction marker lists them: the user's words shown as
they wrote them (no character read as Markdown), files and commands as code."""

from __future__ import annotations

from app.core.protocol.compaction import CompactionMarker
from app.ui.transcript.compaction_row import carried_markdown


def test_the_users_words_are_escaped_and_paths_and_commands_are_code() -> None:
    marker = CompactionMarker(
        item_id="c1",
        carried_notes=[r"use *bold* _x_ [link](y) <b> #1 a|b c:\dir plain"],
        carried_files=["src/my_file*.py"],
        carried_commands=["ls | wc -l"],
    )
    assert carried_markdown(marker) == (
        "**What you told the model, carried over**\n\n"
        r"- use \*bold\* \_x\_ \[link\](y) \<b\> \#1 a\|b c:\\dir plain"
        "\n\n**Files**\n\n- `src/my_file*.py`"
        "\n\n**Commands**\n\n- `ls | wc -l`"
    )


def test_nothing_carried_lists_nothing() -> None:
    assert carried_markdown(CompactionMarker(item_id="c1")) == ""
