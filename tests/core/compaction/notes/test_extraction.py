"""Reading notes out of user messages: the user's own sentences that carry facts, in order;
code, pasted logs and truncation markers are not the user speaking; long sentences come out
shortened around their facts."""

from __future__ import annotations

from app.core.compaction.notes.extraction import MAX_NOTE_CHARS, extract_chunk


def notes(*texts: str) -> list[str]:
    return [note for note, _ in extract_chunk(list(texts))]


def test_sentences_with_facts_come_out_in_the_users_words_and_order() -> None:
    found = notes(
        "Hello there. The staging port is 8443 today. Thanks!",
        "Never push to main directly.",
    )
    assert found == ["The staging port is 8443 today.", "Never push to main directly."]
    assert all(score > 0 for _, score in extract_chunk(["The staging port is 8443 today."]))


def test_fenced_code_and_pasted_logs_are_skipped() -> None:
    text = (
        "Here is the file:\n```\nPORT = 9999\nHOST = '/srv/x'\n```\n"
        "2026-01-01 12:00:01 ERROR at /var/log/app.log line 42\n"
        "The real host is db-prod-2."
    )
    found = notes(text)
    assert found == ["The real host is db-prod-2."]


def test_a_long_run_on_sentence_comes_out_as_the_words_around_its_facts() -> None:
    filler = " ".join(["and then we talked about many other things"] * 8)
    text = f"{filler} while the key service is svc-orchard-7 {filler}"
    (note,) = notes(text)
    assert len(note) <= MAX_NOTE_CHARS + 2  # the ellipses
    assert "svc-orchard-7" in note and note.startswith("…") and note.endswith("…")


def test_a_truncation_marker_breaks_the_sentence_it_cuts() -> None:
    text = "The first port is 8080…1234 tokens truncated…and the second host is db-9."
    found = notes(text)
    assert not any("truncated" in note for note in found)
    assert any("8080" in note for note in found) and any("db-9" in note for note in found)


def test_no_message_means_no_notes() -> None:
    assert extract_chunk([]) == [] and extract_chunk(["ok", "thanks"]) == []
