"""A tool output cut to its share: head and tail kept, the note in words, never counted whole
when far over."""

from __future__ import annotations

from app.core.tokens.estimate import approx_tokens
from app.core.tools.output_fit import fit_output


def test_an_output_that_fits_is_returned_as_it_is() -> None:
    assert fit_output("short output", 100, approx_tokens) == "short output"


def test_a_long_output_keeps_head_and_tail_and_says_what_was_left_out() -> None:
    text = "HEAD " + "middle words " * 10_000 + " TAIL"
    cut = fit_output(text, 500, approx_tokens)
    assert approx_tokens(cut) <= 500
    assert cut.startswith("HEAD ") and cut.endswith(" TAIL")
    left = int(cut.split("[… ")[1].split(" characters")[0].replace(",", ""))
    assert 0 < left < len(text) and len(cut) < len(text)
    assert "recall" in cut


def test_a_huge_output_is_never_counted_whole() -> None:
    counted: list[int] = []

    def count(text: str) -> int:
        counted.append(len(text))
        return approx_tokens(text)

    text = "x " * 5_000_000
    cut = fit_output(text, 1000, count)
    assert max(counted) < 10_000 and approx_tokens(cut) <= 1000
