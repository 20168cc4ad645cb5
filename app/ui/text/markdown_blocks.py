"""Where a Markdown text divides into closed blocks: cut points before which the text renders
the same whether it is rendered whole or in parts (the streaming document renders only what
follows the last one; the display segments of a long message fall on them)."""

from __future__ import annotations

import re

FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
# A thematic break (or a setext underline) or a table: Qt joins what follows them to the
# document differently than setHtml does; never cut right after one.
_BREAK = re.compile(r" {0,3}([-*_=])(?: *\1){2,} *$")


def closed_end(text: str, start: int = 0) -> int:
    """The end of the longest run of closed Markdown blocks in ``text`` from ``start``.

    ``start`` must itself be such a cut (0, or an earlier result). A cut is the start of a
    complete line that follows a blank line outside any code fence and begins, unindented, a
    block that cannot continue the one above (not a list item). Returns ``start`` when the
    text after it has no cut yet.
    """
    cut = start
    pos = start
    fence = ""  # the opening run ("```", "~~~~") while inside a fenced code block
    previous_blank = False
    after_break = False  # the last non-blank line was a thematic break
    table = False  # the last block may be a table (it had a line with a "|")
    length = len(text)
    while pos < length:
        end = text.find("\n", pos)
        if end < 0:
            break  # an incomplete last line decides nothing yet
        line = text[pos:end]
        if fence:
            stripped = line.strip()
            if (
                len(line) - len(line.lstrip(" ")) <= 3
                and stripped.startswith(fence)
                and stripped == fence[0] * len(stripped)
            ):
                fence = ""
            previous_blank = False
        else:
            blank = not line.strip()
            if (
                previous_blank
                and not after_break
                and not table
                and not blank
                and pos > start
                and not line[0].isspace()
                and _LIST_ITEM.match(line) is None
            ):
                cut = pos
            if not blank:
                after_break = _BREAK.match(line) is not None
                # A table runs until a blank line, rows without "|" included.
                table = (table and not previous_blank) or "|" in line
            opened = FENCE_OPEN.match(line)
            if opened is not None:
                fence = opened.group(1)
            previous_blank = blank
        pos = end + 1
    return cut
