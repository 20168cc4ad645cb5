"""The demo model's look-back questions (app/demo/model/look_back.py): it checks what it still
sees before it searches, and tells what the search found as what it is (still in view or not),
never the question that asked."""

from __future__ import annotations

from app.demo.conversation import Conversation, Entry
from app.demo.model.look_back import answer_from_recall, answer_from_view, recall_call

FACT = "The staging server listens on port 7001 behind the gateway."
QUESTION = "Which port did I give you for the staging server?"


def conv(*entries: Entry) -> Conversation:
    return Conversation("", list(entries), {"recall"})


def recall_output(*blocks: tuple[str, str]) -> str:
    head = f"{len(blocks)} excerpts from earlier in this conversation for 'x', the best first:"
    return "\n\n".join([head, *[f"[{n}] {where}\n{text}" for n, (where, text) in
                                enumerate(blocks, start=1)]])


def test_a_fact_still_in_view_is_answered_from_it_without_a_search() -> None:
    seen = conv(Entry("summary", f"## What the user asked\n- {FACT}"), Entry("user", QUESTION))
    assert recall_call(seen, QUESTION) is None
    answer = answer_from_view(seen, QUESTION)
    assert answer is not None and "still in my view" in answer and "7001" in answer
    assert "summary" in answer


def test_a_fact_out_of_view_is_searched_for() -> None:
    gone = conv(Entry("user", "Tell me about gardening tools."), Entry("user", QUESTION))
    call = recall_call(gone, QUESTION)
    assert call is not None and call.arguments == {"query": "staging server port"}
    assert answer_from_view(gone, QUESTION) is None


def test_one_shared_word_of_three_is_not_the_fact() -> None:
    # "server" alone: not enough to claim the answer is in view.
    near = conv(Entry("user", "The mail server was slow today."), Entry("user", QUESTION))
    assert answer_from_view(near, QUESTION) is None
    assert recall_call(near, QUESTION) is not None


def test_a_question_in_view_is_no_answer() -> None:
    asked_before = conv(Entry("user", "What port does the staging server use?"),
                        Entry("user", QUESTION))
    assert answer_from_view(asked_before, QUESTION) is None


def test_the_found_passage_out_of_view_is_said_to_be_so() -> None:
    request = conv(Entry("user", QUESTION), Entry("call", '{"query": "port staging"}'),
                   Entry("output", ""))
    output = recall_output(("turn 2 · the user's message · no longer in your view", FACT))
    answer = answer_from_recall(request, "port staging", output)
    assert answer.startswith("That is no longer in my view") and FACT in answer
    assert "turn 2, what you said" in answer


def test_the_found_passage_still_in_view_is_never_said_to_have_left() -> None:
    request = conv(Entry("user", FACT), Entry("user", QUESTION), Entry("output", ""))
    # Marked in view by the search ...
    marked = recall_output(("turn 1 · the user's message · still in your view", FACT))
    answer = answer_from_recall(request, "port staging", marked)
    assert "still in my view" in answer and "no longer" not in answer and FACT in answer
    # ... or an answer out of view that quotes it: the fact itself is in view.
    quoted = recall_output(("turn 1 · your answer · no longer in your view",
                            f"You wrote: “{FACT}” Keep going."))
    answer = answer_from_recall(request, "port staging", quoted)
    assert "still in my view" in answer and "no longer" not in answer


def test_the_question_that_asked_is_skipped_for_the_next_passage() -> None:
    request = conv(Entry("user", QUESTION), Entry("output", ""))
    output = recall_output(("turn 3 · the user's message · still in your view", QUESTION),
                           ("turn 1 · the user's message · no longer in your view", FACT))
    answer = answer_from_recall(request, "port staging", output)
    assert FACT in answer and QUESTION not in answer
    only = recall_output(("turn 3 · the user's message · still in your view", QUESTION))
    answer = answer_from_recall(request, "port staging", only)
    assert "found only your question" in answer and "no longer in my view" not in answer


def test_a_question_quoted_back_is_no_answer_and_the_users_words_come_first() -> None:
    echoed = conv(
        Entry("assistant", f"Your question: “{QUESTION}” The key words are staging, server and port."),
        Entry("user", FACT), Entry("user", QUESTION),
    )
    answer = answer_from_view(echoed, QUESTION)
    assert answer is not None and "You told me" in answer and "7001" in answer
    quoted_only = conv(Entry("assistant", f"Your question: “{QUESTION}”"), Entry("user", QUESTION))
    assert answer_from_view(quoted_only, QUESTION) is None
