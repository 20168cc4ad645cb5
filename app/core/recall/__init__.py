"""Recall: the model (and the user) can search the whole conversation, including what compaction
removed from the model's view (spec section 10).

``index`` keeps a full-text index (SQLite FTS5) of a session's rollout beside it; ``query``
turns any text into a safe full-text query; ``tool`` offers the search to the model as a tool
and formats what it finds within a token budget.
"""

from __future__ import annotations

from .tool import RECALL_TOOL, RecallTool, SessionTools

# ``index`` (SQLite) is imported when a session first builds its recall tool, not with the app.
__all__ = ["RECALL_TOOL", "RecallTool", "SessionTools"]
