"""What a session tells the user beside the conversation: errors (with their detail), warnings,
background lines, stall and retry notices, and the once-a-session warnings; the ones worth
showing again after resume are recorded."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from .. import protocol as p
from ..providers.errors.table import scrub_secrets
from ..providers.probe import local_tools_warning
from ..rollout.store import RolloutWriteError
from ..sessions.record import STORAGE_ERRORS

if TYPE_CHECKING:
    from ..config import CoreConfig
    from ..conversation.transcript import Transcript
    from ..providers.base import ProviderError
    from ..providers.sampling import StreamAttempt

INTERRUPTED = "Interrupted by the user."
OUTPUT_LIMIT_WARNING = "The reply stopped at the model's output limit, so it may be cut short."

NoteKind = Literal["error", "warning", "background"]


class Notices:
    """Says things to the user: emitted, and kept in the transcript and rollout when a
    reopened conversation should show them again."""

    def __init__(
        self,
        *,
        config: Callable[[], CoreConfig],
        transcript: Transcript,
        emit: Callable[[p.Event], None],
        record: Callable[[str, dict[str, Any]], None],
        no_tool_calls: Callable[[], None] = lambda: None,
    ) -> None:
        self._config = config
        self._no_tool_calls = no_tool_calls
        self._transcript = transcript
        self._emit = emit
        self._record = record
        self.said_output_limit = False  # the output-limit warning is given once a session
        self.tools_checked = False  # whether the server was asked if it keeps tools

    def note(self, kind: NoteKind, message: str, compaction_id: str = "") -> None:
        """An error/warning/background line worth showing again after resume (when it can be
        saved: a note about a failed write must not fail in turn); ``compaction_id``: the
        compaction a warning is about."""
        self._transcript.add_note(kind, message, compaction_id)
        about = {"compaction_id": compaction_id} if compaction_id else {}
        try:
            self._record("event", {"kind": kind, "message": message, **about})
        except STORAGE_ERRORS:
            pass

    def warning(self, message: str) -> None:
        """A warning shown now and again after resume."""
        self.note("warning", message)
        self._emit(p.Warning(message=message))

    def error(self, message: str, kind: p.ErrorKind, turn_id: str | None = None) -> None:
        self.note("error", message)
        self._emit(p.Error(message=message, kind=kind, turn_id=turn_id))

    def error_with_details(
        self, message: str, kind: p.ErrorKind, turn_id: str | None, details: str
    ) -> None:
        """An error with its technical detail (shown one click away, kept for resume); the
        detail is scrubbed of the key once more, whatever produced it."""
        details = scrub_secrets(details, [self._config().api_key.get_secret_value()])
        if not details:
            self.error(message, kind, turn_id)
            return
        self._transcript.add_error(message, details)
        try:
            self._record("event", {"kind": "error", "message": message, "details": details})
        except STORAGE_ERRORS:
            pass
        self._emit(p.Error(message=message, kind=kind, turn_id=turn_id, details=details))

    def storage_failed(self, turn_id: str, exc: Exception, unsaved_text: str | None) -> None:
        """Saving failed: say so in words; the user's message, when it was not saved, goes back
        to the composer. What was shown stays on screen; the next turn tries to save again."""
        message = str(exc)
        if isinstance(exc, RolloutWriteError):
            message += " What is on screen was not saved; free some space (or fix the folder's "
            message += "permissions) and send again."
        self._emit(p.Error(message=message, kind="storage", turn_id=turn_id))
        if unsaved_text is not None:
            self._emit(p.MessageNotSent(turn_id=turn_id, text=unsaved_text, reason=message))

    def interrupted(self, turn_id: str) -> None:
        """The user stopped a turn: said, and recorded with the turn it ended."""
        self.warning(INTERRUPTED)
        self._record("event", {"kind": "interrupted", "turn_id": turn_id})

    def retry_notice(self, turn_id: str) -> Any:
        """Says when a failed request is sent again, and why it waits as long as it does."""

        def notice(attempt: int, max_attempts: int, error: ProviderError) -> None:
            wait = error.retry_wait
            self._emit(
                p.StreamError(
                    turn_id=turn_id,
                    message=f"Reconnecting... {attempt}/{max_attempts}",
                    attempt=attempt,
                    max_attempts=max_attempts,
                    details=describe(error),
                    reason=wait.reason if wait is not None else "",
                    wait_seconds=wait.seconds if wait is not None else None,
                    requested_seconds=wait.requested if wait is not None else None,
                )
            )

        return notice

    def stall_notice(self, turn_id: str) -> Any:
        """Says when the server has sent nothing for a while (``seconds``), and when data
        flows again (``None``); the window counts on from the figures."""

        def notice(seconds: float | None) -> None:
            self._emit(
                p.StreamWaiting(
                    turn_id=turn_id,
                    since_seconds=seconds or 0.0,
                    timeout_seconds=self._config().request_timeout,
                    stalled=seconds is not None,
                )
            )

        return notice

    def about_reply(self, turn_id: str, reply: str | None, attempt: StreamAttempt) -> None:
        """A final answer that is empty, or cut at the output limit, says so."""
        if not (reply or "").strip():
            message = (
                "The model sent an empty reply (no text and no tool call). Try again, or "
                "rephrase the message."
            )
        elif attempt.stop_reason == "length" and self.said_output_limit:
            # Said once; a server whose every reply runs to its limit (llama.cpp's default
            # n_predict) would otherwise warn on every turn.
            message = "This reply also stopped at the output limit."
            self.note("background", message)
            self._emit(p.Background(turn_id=turn_id, message=message))
            return
        elif attempt.stop_reason == "length":
            self.said_output_limit = True
            message = (
                f"{OUTPUT_LIMIT_WARNING} Ask it to go on, or raise the server's output limit "
                "(llama.cpp: --n-predict)."
            )
        else:
            return
        self.warning(message)

    def replayed(self, message: str) -> None:
        """A recorded note read back on resume: the output-limit warning stays said."""
        if message.startswith(OUTPUT_LIMIT_WARNING):
            self.said_output_limit = True

    async def once_about_tools(self) -> None:
        """A local server whose chat template drops tool definitions: the model cannot call
        tools, so none is offered to it, and the features that need them are named; said once
        a session, where the server tells (llama.cpp's /props, Ollama, LM Studio)."""
        if self.tools_checked:
            return
        self.tools_checked = True
        warning = await local_tools_warning(self._config())
        if warning:
            self._no_tool_calls()
            self.warning(warning)


def describe(error: ProviderError) -> str:
    return error.message
