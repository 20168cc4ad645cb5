"""What a fork copies: the lines of its path's records, byte for byte, and what they hold (the
fork's session list entry and the stored files its messages name), most of it read from the
lines' heads.

The session's tree says which lines are on the path; the file is read once and only those
lines are looked at. A line's head (its time and type, where the writer puts them) is enough
for most records: a turn's context, an event, a message the person exchanged with no
attachment (one more message). The records that say more are parsed: a message that may be
one Coco injected or that names stored files, a tool call or output, a compaction's kept
messages, and of the context's token counts only the last. Parsing every record of a
5 000-turn path had cost what opening the session costs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..conversation.tree import BRANCH_RECORD, TurnTree
from ..items import ATTACHMENT, attachment_parts
from ..rollout.lines_at import Spans, head_of, read_spans_at, record_of
from ..rollout.reader import DAMAGED_LINE_RECORD
from ..rollout.store import RolloutRecord
from ..system.collector import collector_paused
from .index import SESSION_TITLE_RECORD
from .summary import SessionSummary, token_total

# The fork writes its own meta and title; a switch is no part of a path.
NOT_COPIED = ("session_meta", SESSION_TITLE_RECORD, BRANCH_RECORD)
_NOT_COPIED_TYPES = frozenset(kind.encode() for kind in NOT_COPIED)
# The types a fork parses whatever their heads say: a compaction's kept messages may name
# stored files; a damaged line's mark is no record.
_PARSED_TYPES = frozenset((b"compacted", DAMAGED_LINE_RECORD.encode()))
# How the payload of a message the person exchanged starts: an assistant's (as Coco makes one,
# its id after the role, and as the Responses API sends one, its id and status first), or a
# user's whose text starts with a character no message Coco injects starts with (they start
# with "<"; a space, an escape or a character beyond ASCII is left to parsing).
_EXCHANGED_MESSAGE = re.compile(
    rb'\{"item":\{(?:'
    rb'(?:"id":"[^"\\]*",)?"type":"message",(?:"status":"[a-z_]*",)?"role":"assistant"[,}]'
    rb'|"type":"message","role":"user","content":\[\{"type":"input_text","text":"[!-;=-\[\]-~]'
    rb')'
)
_ATTACHMENT_PART = b'"type":"' + ATTACHMENT.encode() + b'"'
_TOKEN_COUNT = b'"token_count"'


class Kept:
    """What the records a fork keeps hold, taken as they go by: its session list entry (as the
    list would sum it up from the fork's file) and the stored files its messages name."""

    def __init__(self, summary: SessionSummary) -> None:
        self.summary = summary
        self.stored_names: list[str] = []
        self.token_lines: list[tuple[int, int, int]] = []  # the token counts' spans and lines
        self.last_glanced: bytes | None = None  # the time of the last record, if glanced at

    def glance(self, data: bytes | bytearray, end: int, line_no: int, head: re.Match[bytes]) -> bool:
        """Take what the record on the line ending at ``end`` holds from its ``head`` alone;
        False when it must be parsed for that (:meth:`see`)."""
        kind, payload = head["type"], head.end()
        if kind == b"response_item":
            if not _EXCHANGED_MESSAGE.match(data, payload, end) or (
                data.find(_ATTACHMENT_PART, payload, end) >= 0
            ):
                return False
            self.summary.message_count += 1
        elif kind in _PARSED_TYPES:
            return False
        elif kind == b"event" and data.find(_TOKEN_COUNT, payload, end) >= 0:
            self.token_lines.append((head.start(), end, line_no))  # only the last one counts
        self.last_glanced = head["time"]
        return True

    def see(self, record: RolloutRecord) -> None:
        self.summary.add(record)
        self.last_glanced = None
        if token_total(record) is not None:  # after the token counts glanced at so far
            self.token_lines.clear()
        kind, payload = record.type, record.payload
        if kind == "response_item":
            item = payload.get("item")
            if isinstance(item, dict):
                self._stored(item)
        elif kind == "compacted":  # a compaction's kept messages
            history = payload.get("replacement_history")
            for each in history if isinstance(history, list) else []:
                if isinstance(each, dict):
                    self._stored(each)

    def finish(self, data: bytes | bytearray) -> None:
        """The latest activity (the last record's time) and the context's tokens (the last
        token count glanced at that says them)."""
        if self.last_glanced is not None:
            self.summary.stamp(self.last_glanced.decode())
        for start, end, line_no in reversed(self.token_lines):
            total = token_total(record_of(data, start, end, line_no))
            if total is not None:
                self.summary.tokens = total
                return

    def _stored(self, item: dict[str, Any]) -> None:
        for part in attachment_parts(item):
            self.stored_names.extend(str(part.get(key) or "") for key in ("file", "sent_file"))


def path_lines(
    source: Path, tree: TurnTree, turn_id: str, summary: SessionSummary
) -> tuple[bytes, Kept]:
    """The lines of ``source``'s records on the path to ``turn_id`` that a fork copies (read
    once; runs of neighbouring lines joined as one slice), and what they hold. Raises
    ``RolloutChanged`` when the file is not what the tree knows (``LineChanged`` for a line of
    the path that holds no record)."""
    seqs = tree.path_records(turn_id)
    wanted, total = tree.lines_at(seqs)
    kept = Kept(summary)
    lines = b""

    def keep(data: bytes | bytearray, spans: Spans) -> None:
        nonlocal lines
        runs: list[list[int]] = []
        glance, see = kept.glance, kept.see
        for (start, end), line_no in zip(spans, wanted, strict=True):
            head = head_of(data, start, end)
            if head is not None and head["type"] in _NOT_COPIED_TYPES:
                continue
            if head is None or not glance(data, end, line_no, head):
                record = record_of(data, start, end, line_no)
                if record.type in NOT_COPIED:
                    continue
                see(record)
            if runs and runs[-1][1] + 1 == start:  # the next line: the run goes on
                runs[-1][1] = end
            else:
                runs.append([start, end])
        kept.finish(data)
        size = len(data)
        with memoryview(data) as view:  # each run with its newline: one copy of the bytes
            lines = b"".join(
                piece for start, end in runs for piece in (
                    (view[start:end + 1],) if end < size else (view[start:end], b"\n")
                )
            )

    with collector_paused():  # as an open does: the records hold no cycles
        read_spans_at(source, wanted, total, keep)
    return lines, kept
