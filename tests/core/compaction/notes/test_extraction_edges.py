"""The edges of reading notes out of user messages: where fenced code starts and ends, the
places a fact may start (a lowercase that is longer than its letter, a word said three times),
the fences of a later message, a long sentence cut to its facts (the windows around them, the
room the note has, its ellipses) and a cut moved out of the middle of a word."""

from __future__ import annotations

from app.core.compaction.notes.extraction import (
    MAX_NOTE_CHARS,
    _candidates,
    _fenced_ranges,
    _note_of,
    _snap,
    extract_chunk,
)


def notes(*texts: str) -> list[str]:
    return [note for note, _ in extract_chunk(list(texts))]


# -- fenced code -------------------------------------------------------------------------------


def test_a_fenced_block_runs_from_its_opening_line_to_the_end_of_its_closing_line() -> None:
    text = "a\n```\ncode\n```\nb"
    assert _fenced_ranges(text) == [(2, 15)]
    assert text[2:15] == "```\ncode\n```\n"
    assert _fenced_ranges("~~~\ncode\n~~~\nafter") == [(0, 13)]
    assert _fenced_ranges("\n```\nx\n```\n") == [(1, 11)]  # a fence after a first blank line


def test_a_closing_fence_at_the_very_end_and_a_fence_left_open_run_to_the_end() -> None:
    assert _fenced_ranges("```\nx\n```") == [(0, 9)]
    assert _fenced_ranges("text\n```\nstill code\nmore") == [(5, 24)]


def test_two_blocks_are_two_ranges_and_a_fence_inside_a_line_is_not_one() -> None:
    text = "```\na\n```\nmiddle 1\n```\nb\n```\nend of it\nlast line"
    assert _fenced_ranges(text) == [(0, 10), (19, 29)]
    assert _fenced_ranges("say ```x``` inline\nok") == []
    assert _fenced_ranges("  ```\nindented fence\n  ```\n") == [(0, 27)]


def test_fences_in_a_later_message_are_found_where_that_message_is() -> None:
    found = notes(
        "Call it db-7",
        "```\nPORT = 9999\n```\n7 nodes run here.",
        "~~~\nx = 1234\n~~~\n8 GB remain.",
    )
    assert found == ["Call it db-7", "7 nodes run here.", "8 GB remain."]


def test_a_line_right_after_a_block_is_read() -> None:
    assert notes("```\nx = 1\n```\nPort 8080 is open.") == ["Port 8080 is open."]


# -- where a fact may start --------------------------------------------------------------------


def test_a_lowercase_longer_than_its_letter_keeps_the_offsets_of_the_text() -> None:
    # "İ" lowercases to two characters: the words found after it keep their place.
    assert "İ".lower() != "i" and len("İ".lower()) == 2
    assert _candidates("İ Never") == [2]


def test_each_time_a_word_is_said_is_a_place_to_look() -> None:
    text = "never a, never b, never c"
    assert _candidates(text) == [0, 9, 18]


# -- sentences in a line -----------------------------------------------------------------------


def test_a_sentence_ends_at_its_mark_and_the_next_starts_after_it() -> None:
    assert notes("Use port 8080. Then db-7; or 9090!") == [
        "Use port 8080.", "Then db-7;", "or 9090!",
    ]
    # A mark right after the fact's place ends the sentence there.
    assert notes("x 8080. y") == ["x 8080."]
    assert notes("Port 8080.\nHost db-7") == ["Port 8080.", "Host db-7"]


def test_every_fact_of_a_line_is_read_once() -> None:
    assert notes("8080 and 9090 and 7070.") == ["8080 and 9090 and 7070."]
    assert notes("8080", "9090") == ["8080", "9090"]


# -- a long sentence ----------------------------------------------------------------------------

_PAD = "and then we spoke about lots of other things for a long while"


def test_a_long_sentence_keeps_the_words_around_its_fact_with_ellipses() -> None:
    sentence = f"{_PAD} until the port 8443 came up {_PAD} {_PAD}"
    note, score = _note_of(sentence) or ("", 0)
    assert note == (
        "…lots of other things for a long while until the port 8443 came up and then we "
        "spoke about lots of other…"
    )
    assert score == 2


def test_facts_close_together_share_one_window() -> None:
    sentence = f"{_PAD} the host db-7 and port 8443 {_PAD} {_PAD}"
    assert _note_of(sentence) == (
        (
            "…lots of other things for a long while the host db-7 and port 8443 and then we "
            "spoke about lots of other things for…"
        ),
        4,
    )


def test_facts_far_apart_give_two_windows_and_a_third_does_not_fit() -> None:
    sentence = f"db-7 first {_PAD} {_PAD} then port 8443 {_PAD} {_PAD} and at last /srv/x {_PAD}"
    note, _ = _note_of(sentence) or ("", 0)
    assert note == (
        "db-7 first and then we spoke about lots of other… …about lots of other things for a "
        "long while then port 8443 and then we spoke about lots…"
    )


def test_a_fact_at_the_end_has_no_ellipsis_after_it() -> None:
    sentence = f"{_PAD} {_PAD} {_PAD} ends with 8443"
    assert _note_of(sentence) == ("…lots of other things for a long while ends with 8443", 2)


def test_a_fact_inside_long_unbroken_runs_is_cut_at_the_spaces_around_it() -> None:
    run = "x" * 60
    assert _note_of(f"{run} {run} 8443 {run} {run}") == ("…8443…", 2)


def test_a_second_window_gets_the_room_left_while_forty_characters_are_left() -> None:
    # The first window takes 98 characters and its ellipsis and space: 40 are left, enough.
    sentence = (
        "db-7 word word word word word word www port 8443 " + " ".join(["tail"] * 40)
        + " at /srv/app " + " ".join(["end"] * 20)
    )
    note, _ = _note_of(sentence) or ("", 0)
    first, second = note.split("… …")
    assert len(first) == 98
    assert len(second) <= 40 + 1  # what the room holds, and the leading ellipsis
    assert len(note) <= MAX_NOTE_CHARS + 2


def test_a_short_sentence_is_kept_whole_down_to_four_characters() -> None:
    assert _note_of("8080") == ("8080", 2)
    assert _note_of("  8080  ") == ("8080", 2)
    assert _note_of("808") is None  # under four characters: nothing to say
    exact = "Port 8443 " + "a" * (MAX_NOTE_CHARS - 10)
    assert len(exact) == MAX_NOTE_CHARS
    assert _note_of(exact) == (exact, 2)


# -- a cut out of the middle of a word ---------------------------------------------------------


def test_a_cut_at_the_start_moves_to_the_next_word_inside_the_span() -> None:
    assert _snap("alpha beta gamma", 2, 16) == (6, 16)
    assert _snap("ab cd", 1, 5) == (3, 5)
    assert _snap("alpha beta", 0, 10) == (0, 10)  # the text's start is a word's start
    assert _snap("ab cd ef", 3, 8) == (3, 8)  # already after a space
    assert _snap("abcdef", 2, 6) == (2, 6)  # no space inside: left as it is
    assert _snap("abcdef gh", 2, 5) == (2, 5)  # a space past the span does not count


def test_a_cut_at_the_end_moves_back_to_the_last_space_inside_the_span() -> None:
    assert _snap("alpha beta gamma", 0, 8) == (0, 5)
    assert _snap("ab cd ef", 0, 5) == (0, 5)  # already before a space
    assert _snap("ab cdefgh ij", 3, 6) == (3, 6)  # no space inside: never grows
    assert _snap("ab  cdef", 3, 6) == (3, 6)  # a space at the span's start: nothing left
    assert _snap("ab cd efgh", 3, 8) == (3, 5)


def test_windows_that_just_touch_are_one() -> None:
    # "db-7" ends at 4 and "8443" starts at 104: their windows meet at 54 and are joined.
    sentence = "db-7 " + "w" * 98 + " 8443" + " tail" * 20
    assert _note_of(sentence) == (
        "db-7 " + "w" * 98 + " 8443 tail tail tail tail tail tail…", 4
    )


def test_a_window_starting_one_character_in_is_said_to_start_later() -> None:
    # No space to move to: the window starts at the second character, and says so.
    note, _ = _note_of("-" * 51 + "8443" + "-" * 100) or ("", 0)
    assert note == "…" + "-" * 50 + "8443" + "-" * 50 + "…"


def test_a_fact_at_the_very_start_of_a_message_is_read() -> None:
    assert notes("/x is the path.") == ["/x is the path."]


def test_a_code_line_right_after_a_leading_line_break_is_skipped() -> None:
    assert notes("\nreturn 8080") == []


def test_a_sentence_without_a_mark_ends_with_its_line() -> None:
    assert notes("Port 8080\nHost db-7. Then more.") == ["Port 8080", "Host db-7."]


def test_a_window_exactly_as_long_as_the_room_left_is_kept_whole() -> None:
    sentence = (
        "ccc port 8443 dddd ccc a a a ffffff bb a a a dddd a a dddd ffffff eeeee bb dddd a "
        "dddd ffffff ffffff eeeee bb a a bb ccc ffffff db-7 ccc ccc ffffff a bb bb dddd"
    )
    note, _ = _note_of(sentence) or ("", 0)
    first, second = note.split("… …")
    assert second.endswith("a bb bb dddd")  # the sentence's end: no word cut off
    assert len(first) + 2 + len(second) + 1 == MAX_NOTE_CHARS + 1
