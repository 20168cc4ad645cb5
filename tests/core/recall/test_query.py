"""The recall tool's safe FTS5 query (app/core/recall/query.py), each limit at its boundary:
the query's length, the number of terms, a word's length (issue 40)."""

from __future__ import annotations

from app.core.recall.query import SearchQuery, build_query, split_form


def words(count: int) -> str:
    return " ".join(f"word{chr(97 + n // 26)}{chr(97 + n % 26)}" for n in range(count))


def test_a_query_of_2000_characters_is_searched_whole() -> None:
    text = "x" * 1_995 + " tail"  # 2 000 characters
    query = build_query(text)
    assert query is not None and query.note == "" and query.words == ["x" * 64, "tail"]
    cut = build_query(text + "s")  # 2 001: the last character goes
    assert cut is not None
    assert cut.note == "the query was cut to its first 2000 characters"
    assert cut.words == ["x" * 64, "tail"]


def test_sixteen_terms_are_searched_and_a_seventeenth_is_not() -> None:
    sixteen = build_query(words(16))
    assert sixteen is not None and sixteen.note == "" and sixteen.match.count(" AND ") == 15
    seventeen = build_query(words(17))
    assert seventeen is not None
    assert seventeen.note == "only its first 16 words were searched"
    assert seventeen.match.count(" AND ") == 15 and seventeen.any_match.count(" OR ") == 15
    assert len(seventeen.words) == 17  # the excerpts still centre on every word
    both = build_query(words(17) + " " + "y" * 1_990)
    assert both is not None and both.note == (
        "the query was cut to its first 2000 characters; only its first 16 words were searched"
    )


def test_a_query_of_two_to_32_words_is_also_a_phrase() -> None:
    assert build_query("tokenizer").phrase == ""  # type: ignore[union-attr]
    assert build_query("summary of the plan").phrase == (  # type: ignore[union-attr]
        '"summary of the plan"'  # stop words kept: the words as written, in order
    )
    thirty_two = build_query(words(32))
    assert thirty_two is not None and thirty_two.phrase == f'"{words(32)}"'
    thirty_three = build_query(words(33))
    assert thirty_three is not None and thirty_three.phrase == ""


def test_a_word_is_searched_on_its_first_64_characters() -> None:
    for length, kept in ((63, 63), (64, 64), (65, 64)):
        query = build_query("z" * length)
        assert query == SearchQuery(f'"{"z" * kept}"', f'"{"z" * kept}"', ["z" * kept])


def test_the_query_parts_exactly() -> None:
    assert build_query("Where is the ORCHARD_SHARD_COUNT?") == SearchQuery(
        '"orchard shard count"', '"orchard shard count"', ["orchard", "shard", "count"],
        phrase='"where is the orchard shard count"',
    )
    assert build_query("ORCHARD_SHARD_COUNT") == SearchQuery(  # already one phrase
        '"orchard shard count"', '"orchard shard count"', ["orchard", "shard", "count"]
    )
    assert build_query("svc41 and svc41") == SearchQuery(
        '("svc41" OR "svc 41")', '("svc41" OR "svc 41")', ["svc41"], phrase='"svc41 and svc41"'
    )
    assert build_query("the of") == SearchQuery(
        '"the" AND "of"', '"the" OR "of"', ["the", "of"], phrase='"the of"'
    )
    assert build_query('"()*') is None
    assert split_form("orchardShard41") == ["orchard", "Shard", "41"]


def test_a_chunk_without_a_word_or_a_repeated_word_does_not_end_the_query() -> None:
    query = build_query("... staging -- port staging gateway")
    assert query is not None
    assert query.match == '"staging" AND "port" AND "gateway"'


def test_an_identifier_made_of_stop_words_is_kept_as_its_phrase() -> None:
    query = build_query("the in-place edits")
    assert query is not None
    assert query.match == '"in place" AND "edits"'  # "the" dropped, "in-place" kept whole


def test_one_camelcase_word_is_not_also_searched_as_a_phrase() -> None:
    query = build_query("svc41")
    assert query is not None
    assert query.match == '("svc41" OR "svc 41")' and query.phrase == ""
