"""Recall: the model (and the user) can search the whole conversation, including what compaction
removed from the model's view (spec section 10).

``index`` keeps a full-text index (SQLite FTS5) of a session's rollout beside it; ``query``
turns any text into a safe full-text query; ``tool`` offers the search to the model as a tool
and formats what it finds within a token budget.
"""

from __future__ import annotations

from .index import RECALL_TOOL, RecallHit, RecallIndex, recall_index_path
from .tool import RecallTool, SessionTools

__all__ = [
    "RECALL_TOOL",
    "RecallHit",
    "RecallIndex",
    "RecallTool",
    "SessionTools",
    "recall_index_path",
]
