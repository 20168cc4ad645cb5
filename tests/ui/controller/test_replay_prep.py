"""A reopened huge message's display parts are found quickly, and are exactly the parts the
line-by-line rules give (``long_text.display_cuts``), whatever the text holds."""

from __future__ import annotations

import random
from itertools import pairwise

import pytest

from app.ui.controller.replay_prep import quick_cuts
from app.ui.text.long_text import display_cuts

LOG = "log line 0042: request served in 12 ms, cache hit, 200 OK\n" * 2000


@pytest.mark.parametrize(
    "text",
    [
        LOG,  # no blank line, no fence: the quick path all the way
        "x" * 50_000 + "\n" + LOG,  # a line longer than a part, then a part starting blank
        LOG[:60_000] + "```python\nx = 1\n" * 300 + "```\n" + LOG[:60_000],  # a fence midway
        LOG[:50_000] + "\n\n" + LOG[:50_000],  # a blank line midway
        LOG[:40_000] + "  \n" + LOG[:40_000],  # a line of spaces is blank too
        "\n" + LOG[:50_000],  # blank from the start
        LOG[:30_000] + "~~~\nlog\n~~~\n" + LOG[:30_000],
        "y" * 70_000,  # one line
        "short",
    ],
)
def test_quick_cuts_are_the_display_cuts(text: str) -> None:
    assert quick_cuts(text) == display_cuts(text)


def test_quick_cuts_are_the_display_cuts_of_mixed_texts() -> None:
    rng = random.Random(7)
    pieces = ["word " * 900 + "\n", "z" * 4_000, "\n\n", "```\n", "~~~\n", "  \n", "- item\n", "\n"]
    for _ in range(25):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(5, 60)))
        assert quick_cuts(text) == display_cuts(text)


def test_a_log_is_cut_without_the_line_by_line_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """A log (no blank line, no fence) never reaches the line-by-line scan."""
    from app.ui.controller import replay_prep

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the line-by-line rules were used")

    monkeypatch.setattr(replay_prep, "display_cuts", refuse)
    cuts = quick_cuts(LOG * 10)
    assert cuts and all(cut.fence == "" for cut in cuts)
    assert all((LOG * 10)[cut.offset - 1] == "\n" for cut in cuts)


async def test_prepared_parts_carry_their_line_breaks() -> None:
    """The replay takes a long message's parts ready, with the line breaks of each already
    counted (its rows' height estimates then count nothing on the window's thread)."""
    from types import SimpleNamespace

    from app.ui.controller.replay_prep import prepare_replay, prepared_cuts

    text = LOG * 10
    item = SimpleNamespace(kind="agent_message", data={"text": text})
    await prepare_replay([SimpleNamespace(type="item_completed", item=item)])  # type: ignore[list-item]
    cuts, lines = prepared_cuts(text)
    assert cuts == display_cuts(text) and lines is not None
    bounds = [0, *(cut.offset for cut in cuts), len(text)]
    assert lines == [text.count("\n", a, b) for a, b in pairwise(bounds)]
    assert sum(lines) == text.count("\n")
    assert prepared_cuts(text) == (cuts, None)  # taken once; asked again, found anew
