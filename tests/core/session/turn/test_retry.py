"""Running a failed turn again (``app.core.session.turn.retry``): offered only while its message is the
last one the model would see; refused in words otherwise."""

from __future__ import annotations

from app.core import protocol as p
from app.core.conversation.history import ContextHistory
from app.core.items import assistant_message, user_message
from app.core.session.turn.retry import TurnRetry
from app.core.tokens.counter import TokenCounter


def make() -> tuple[TurnRetry, ContextHistory, list[p.Event]]:
    history = ContextHistory(TokenCounter("gpt-4o", allow_download=False))
    events: list[p.Event] = []
    return TurnRetry(history, events.append), history, events


def test_a_failed_last_message_is_offered_and_re_run_by_the_same_op() -> None:
    retry, history, events = make()
    history.append(user_message("plan a trip"))
    retry.offer("t1", "plan a trip")
    assert events == [p.RetryAvailable(turn_id="t1")]
    op = retry.request(busy=False)
    assert op is not None and op.text == "plan a trip"
    assert retry.is_retry(op) and not retry.is_retry(p.UserTurn(text="plan a trip"))


def test_a_message_no_longer_last_is_not_offered() -> None:
    retry, history, events = make()
    history.append(user_message("first"))
    history.append(user_message("second"))
    retry.offer("t1", "first")
    (event,) = events
    assert isinstance(event, p.RetryAvailable) and event.turn_id is None
    assert "no longer the last" in event.reason
    assert retry.point is None


def test_retry_is_refused_while_busy_and_when_nothing_failed() -> None:
    retry, history, events = make()
    assert retry.request(busy=False) is None
    assert events[-1] == p.Error(message="There is no failed message to send again.",
                                 kind="invalid_op")
    history.append(user_message("x"))
    retry.offer("t1", "x")
    assert retry.request(busy=True) is None
    assert isinstance(events[-1], p.Error) and "Wait" in events[-1].message
    assert retry.point == ("t1", "x")  # still offered once the turn ends


def test_a_new_turn_withdraws_the_offer_and_a_compaction_that_kept_it_offers_again() -> None:
    retry, history, events = make()
    history.append(user_message("x"))
    retry.offer("t1", "x")
    retry.offer_again()
    assert events[-1] == p.RetryAvailable(turn_id="t1")
    retry.forget()
    assert events[-1] == p.RetryAvailable(turn_id=None, reason="A newer turn started.")
    history.append(assistant_message("later"))
    retry.offer_again()  # nothing offered any more
    assert len(events) == 3


def test_the_refusals_words() -> None:
    retry, history, events = make()
    history.append(user_message("x"))
    retry.offer("t1", "x")
    assert retry.request(busy=True) is None
    assert events[-1] == p.Error(
        message="Wait for the current turn to finish before retrying.", kind="invalid_op"
    )
    history.append(user_message("y"))
    assert retry.refusal() == (
        "The failed message is no longer the last one in the conversation."
    )


def test_a_retry_asked_once_the_message_is_no_longer_last_is_refused_and_withdrawn() -> None:
    retry, history, events = make()
    history.append(user_message("x"))
    retry.offer("t1", "x")  # offered: still the last message
    history.append(user_message("y"))  # then another came after it
    assert retry.request(busy=False) is None  # the failed turn is not run again
    refusal = "The failed message is no longer the last one in the conversation."
    assert events[-2:] == [
        p.Error(message=refusal, kind="invalid_op"),
        p.RetryAvailable(turn_id=None, reason=refusal),  # withdrawn, saying why
    ]
    assert retry.point is None
