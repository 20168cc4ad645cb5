"""What recall can find: an item's searchable text and digest, long texts cut into passages,
identifiers found by their parts, and a compaction record's summary."""

from __future__ import annotations

from app.core.compaction.prompts import summary_prefix
from app.core.items import (
    assistant_message,
    developer_message,
    function_call,
    function_call_output,
    user_message,
)
from app.core.recall.searchable import (
    MAX_SPLIT_TOKEN,
    PASSAGE_CHARS,
    RECALL_TOOL,
    item_digest,
    item_text,
    passages,
    split_column,
    summary_of,
)


def test_the_text_of_each_kind_of_item() -> None:
    assert item_text(user_message("set the port to 8443")) == ("user", "set the port to 8443")
    assert item_text(assistant_message("done")) == ("assistant", "done")
    call = function_call("read_file", '{"path": "a.toml"}', "c1")
    assert item_text(call) == ("call", 'read_file {"path": "a.toml"}')
    assert item_text(function_call_output("c1", "port = 8443")) == ("output", "port = 8443")
    parts = {"type": "function_call_output", "call_id": "c2",
             "output": [{"type": "input_text", "text": "one"}, {"text": "two"}, "skipped"]}
    assert item_text(parts) == ("output", "one\ntwo")


def test_what_is_never_searched() -> None:
    assert item_text({"type": "reasoning", "summary": []}) is None
    assert item_text(developer_message("You are Coco.")) is None
    assert item_text(user_message("<user_instructions>Be brief.</user_instructions>")) is None
    assert item_text({"type": "compaction", "encrypted_content": "x"}) is None
    assert item_digest({"type": "reasoning", "summary": []}) is None
    assert RECALL_TOOL == "recall"


def test_an_item_is_known_by_the_digest_of_its_text() -> None:
    first = item_digest(user_message("the zebra database moves on Friday"))
    same = item_digest(user_message("the zebra database moves on Friday"))
    other = item_digest(user_message("the zebra database moves on Monday"))
    assert first is not None and len(first) == 8
    assert first == same != other
    # The role is not part of it: the text is what the index holds.
    assert item_digest(assistant_message("the zebra database moves on Friday")) == first


def test_a_short_text_is_one_passage_and_a_blank_one_none() -> None:
    assert passages("a short note") == ["a short note"]
    assert passages("   \n ") == []


def test_a_long_text_is_cut_at_line_ends_into_passages_that_keep_it_all() -> None:
    text = "".join(f"line {n} of the configuration file\n" for n in range(300))
    pieces = passages(text)
    assert len(pieces) > 1
    assert "".join(pieces) == text
    assert all(len(piece) <= PASSAGE_CHARS for piece in pieces)
    assert all(piece.endswith("\n") for piece in pieces)


def test_a_long_line_is_cut_between_words() -> None:
    text = " ".join(f"word{n}" for n in range(1000))
    pieces = passages(text)
    assert "".join(pieces) == text
    assert all(piece.endswith(" ") for piece in pieces[:-1])


def test_identifiers_are_also_indexed_in_their_parts() -> None:
    assert split_column("plain words only, snake_case and kebab-case") == ""
    parts = split_column("ask svc41 about orchardShard").split()
    assert parts == ["svc", "41", "orchard", "Shard"]
    blob = "a" + "0b" * MAX_SPLIT_TOKEN  # a hash or base64: not split
    assert split_column(blob) == ""


def test_the_summary_of_a_compaction_record() -> None:
    summary = user_message(f"{summary_prefix()}\nThe user migrates the zebra database.")
    payload = {"message": "ignored", "replacement_history": [user_message("kept"), summary]}
    assert summary_of(payload).endswith("The user migrates the zebra database.")
    assert summary_of({"message": "an old summary"}) == "an old summary"
    assert summary_of({"replacement_history": "not a list"}) == ""


def test_a_long_text_is_digested_in_steps_as_its_whole_bytes_would_be() -> None:
    import hashlib

    from app.core.recall.searchable import DIGEST_STEP, digest

    # A text over three steps, with characters of every UTF-8 length and a lone surrogate
    # on the steps' boundaries.
    text = "a" * (DIGEST_STEP - 1) + "é€😀\ud800" + "b" * DIGEST_STEP + "ß" * (DIGEST_STEP // 2)
    whole = hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=8).digest()
    assert digest(text) == whole
    assert digest(text[:-1]) != whole
    assert digest("") == hashlib.blake2b(b"", digest_size=8).digest()
