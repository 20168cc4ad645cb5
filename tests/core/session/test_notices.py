"""What a session tells the user beside the conversation (``app.core.session.notices``): recorded notes,
errors with scrubbed details, storage failures, the once-a-session output-limit warning."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.core import CoreConfig
from app.core import protocol as p
from app.core.conversation.transcript import Transcript
from app.core.providers.base import ProviderError
from app.core.providers.sampling import StreamAttempt
from app.core.rollout.store import RolloutWriteError
from app.core.session.notices import INTERRUPTED, OUTPUT_LIMIT_WARNING, Notices
from app.core.sessions.record import ReadOnlySession

KEY = "sk-notice-SECRET-9876"


class Said:
    def __init__(self, fail: Exception | None = None) -> None:
        self.config = CoreConfig(base_url="http://localhost:1/v1", api_key=KEY, model="m")
        self.transcript = Transcript()
        self.events: list[p.Event] = []
        self.records: list[tuple[str, dict[str, Any]]] = []

        def record(kind: str, payload: dict[str, Any]) -> None:
            if fail is not None:
                raise fail
            self.records.append((kind, payload))

        self.notices = Notices(
            config=lambda: self.config, transcript=self.transcript, emit=self.events.append,
            record=record,
        )


def test_a_note_is_kept_for_resume_and_a_failed_save_loses_nothing_shown() -> None:
    said = Said()
    said.notices.warning("Careful.")
    assert said.records == [("event", {"kind": "warning", "message": "Careful."})]
    assert [e["kind"] for e in said.transcript.entries()] == ["warning"]
    failing = Said(ReadOnlySession("read only"))
    failing.notices.error("Broken.", "internal", "t1")  # must not raise
    assert [event.type for event in failing.events] == ["error"]
    assert [e["kind"] for e in failing.transcript.entries()] == ["error"]


def test_error_details_are_scrubbed_of_the_key() -> None:
    said = Said()
    said.notices.error_with_details("It failed.", "server", "t1", f"Authorization: Bearer {KEY}")
    (event,) = said.events
    assert isinstance(event, p.Error) and event.details and KEY not in event.details
    assert KEY not in str(said.records)


def test_a_message_that_could_not_be_saved_goes_back_to_the_composer(tmp_path: Path) -> None:
    said = Said()
    said.notices.storage_failed("t1", RolloutWriteError(tmp_path, OSError(28, "full")), "hi")
    error, not_sent = said.events
    assert isinstance(error, p.Error) and error.kind == "storage"
    assert "free some space" in error.message
    assert isinstance(not_sent, p.MessageNotSent) and not_sent.text == "hi"


def test_the_output_limit_warning_is_said_once_a_session_and_after_resume() -> None:
    said = Said()
    cut = StreamAttempt(stop_reason="length")
    said.notices.about_reply("t1", "a reply", cut)
    said.notices.about_reply("t2", "another", cut)
    assert [event.type for event in said.events] == ["warning", "background"]
    assert said.events[0].message.startswith(OUTPUT_LIMIT_WARNING)  # type: ignore[union-attr]
    resumed = Said()
    resumed.notices.replayed(said.events[0].message)  # type: ignore[union-attr]
    resumed.notices.about_reply("t3", "again", cut)
    assert [event.type for event in resumed.events] == ["background"]


def test_an_empty_reply_is_said_and_a_complete_one_is_not() -> None:
    said = Said()
    said.notices.about_reply("t1", "fine", StreamAttempt(stop_reason=None))
    assert said.events == []
    said.notices.about_reply("t1", "  ", StreamAttempt())
    assert "empty reply" in said.events[0].message  # type: ignore[union-attr]


def test_an_interruption_is_said_and_recorded_with_its_turn() -> None:
    said = Said()
    said.notices.interrupted("t9")
    assert said.events[0].message == INTERRUPTED  # type: ignore[union-attr]
    assert said.records[-1] == ("event", {"kind": "interrupted", "turn_id": "t9"})


def test_retry_and_stall_notices_carry_their_figures() -> None:
    said = Said()
    error = ProviderError("server", "Bad gateway", status=502)
    said.notices.retry_notice("t1")(2, 5, error)
    said.notices.stall_notice("t1")(12.5)
    said.notices.stall_notice("t1")(None)
    retry, stalled, flowing = said.events
    assert isinstance(retry, p.StreamError)
    assert (retry.attempt, retry.max_attempts, retry.details) == (2, 5, "Bad gateway")
    assert isinstance(stalled, p.StreamWaiting) and stalled.stalled
    assert stalled.since_seconds == 12.5
    assert isinstance(flowing, p.StreamWaiting) and not flowing.stalled
