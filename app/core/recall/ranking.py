"""Which passages a recall search returns, in which order: BM25 over the query's words (SQLite
FTS5's ``bm25()``, the index's own ranking function), in tiers so that the exact phrase and
passages holding every word come before those holding some of them, and what the model no
longer sees before what it still sees.

The tiers are asked in turn (the phrase, every word, any word), each an FTS5 query ordered by
BM25, and a lower one only while the higher ones hold fewer than ``limit`` passages out of view:
the usual question costs one or two small queries, not a scan of every passage holding a common
word, and a question whose words are nowhere together still finds the passages holding most of
them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from .query import SearchQuery

# Candidates read per query (each tier's) before in-view ones are put last.
CANDIDATES = 200
# The tiers of a match, best first: the query as one phrase, every word, any word.
PHRASE, ALL_WORDS, ANY_WORDS = 0, 1, 2
# The body weighs twice the camelCase parts column.
_CANDIDATES_SQL = (
    "SELECT fts.rowid, passages.digest, passages.seq FROM fts "
    "JOIN passages ON passages.id = fts.rowid "
    "WHERE fts MATCH ? ORDER BY bm25(fts, 1.0, 0.5) LIMIT ?"
)

Row = tuple[int, bytes, int]  # a passage's rowid, its item's digest, its tier


def ranked(
    conn: sqlite3.Connection,
    query: SearchQuery,
    limit: int,
    in_view: frozenset[bytes],
    where: Callable[[int], bool] | None = None,
    exclude: frozenset[bytes] = frozenset(),
) -> list[Row]:
    """The best ``limit`` passages for ``query``: out of view (their item's digest not in
    ``in_view``) first, then by tier, then by BM25; never one of an item in ``exclude``, nor
    (with ``where``) of a record ``where`` refuses."""
    found: dict[int, Row] = {}  # by rowid, in rank order within each tier
    fresh = 0
    asked: set[str] = set()
    for tier, match in ((PHRASE, query.phrase), (ALL_WORDS, query.match),
                        (ANY_WORDS, query.any_match)):
        if not match or match in asked:
            continue
        asked.add(match)
        for rowid, digest, seq in conn.execute(_CANDIDATES_SQL, (match, CANDIDATES)):
            if rowid in found or digest in exclude or (where is not None and not where(seq)):
                continue
            found[rowid] = (rowid, digest, tier)
            fresh += digest not in in_view
        if fresh >= limit:
            break
    # A stable sort: within a tier, BM25's order stays.
    return sorted(found.values(), key=lambda row: (row[1] in in_view, row[2]))[:limit]
