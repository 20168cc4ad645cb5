"""The transcript: one row per message, tool call, notice or compaction marker.

The rows are plain objects (``row_models``, ``message_rows``, ``compaction_row``); only those on
screen have widgets (the view is a ``VirtualRowArea``), so a session of ten thousand messages
opens as fast as a short one and costs little more memory than its text; a long message is
shown in parts (``long_text``) for the same reason. Streaming text is buffered and re-rendered
at most once per frame (less often when rendering costs more: ``STREAM_PACE``), only the open
end of the Markdown is rendered again, and only the parts on screen are built, one per pass.
The view follows the bottom unless the user scrolled up. It renders core events
(``handle_event``), live or replayed for a reopened session (``replay``), and never touches
the history itself.

``TranscriptView`` is built in layers, each a module of this package and each the base of the
next: ``row_host`` (the view as its rows see it: their widgets and requests), ``rows`` (the rows
by id), ``streaming`` (a reply as it streams in), ``waits`` (a retry's countdown, a stall's
count), ``events`` (the core's events routed to their handlers) and ``transcript_view`` (the
widget itself: its empty hint, a session's opening and replay).
"""

from ..compaction_marker import REMOTE_SUMMARY_TEXT
from ..compaction_row import CompactionRow
from ..message_rows import MessageRow
from ..row_models import NOT_IN_CONTEXT, NoticeRow, ReasoningRow, ToolRow, TranscriptRow
from .transcript_view import TranscriptView

__all__ = [
    "NOT_IN_CONTEXT",
    "REMOTE_SUMMARY_TEXT",
    "CompactionRow",
    "MessageRow",
    "NoticeRow",
    "ReasoningRow",
    "ToolRow",
    "TranscriptRow",
    "TranscriptView",
]
