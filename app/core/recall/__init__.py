"""Recall: the model (and the user) can search the whole conversation, including what compaction
removed from the model's view (spec section 10).

``index`` keeps a full-text index (SQLite FTS5) of a session's rollout beside it, in the
database ``store`` opens, of what ``searchable`` says can be found; ``query`` turns any text
into a safe full-text query; ``tool`` offers the search to the model as a tool and formats what
it finds (``results``) within a token budget.
"""

from __future__ import annotations

from .searchable import RECALL_TOOL
from .tool import RecallTool, SessionTools

# ``index`` (SQLite) is imported when a session first builds its recall tool, not with the app.
__all__ = ["RECALL_TOOL", "RecallTool", "SessionTools"]
