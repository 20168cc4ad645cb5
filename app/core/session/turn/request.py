"""The requests a turn sends: its fields from the config, the history and the tools, and
whether the server compacts inside the response or Coco compacts around it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...attachments.session_files import SessionAttachments
from ...conversation.history_repair import pair_tool_calls
from ...items import Item, user_message
from ...providers.base import ModelRequest

if TYPE_CHECKING:
    from ...config import CoreConfig
    from ...conversation.history import ContextHistory
    from ...recall import SessionTools


class TurnRequests:
    """Builds a session's model requests."""

    def __init__(
        self,
        session_id: str,
        *,
        config: Callable[[], CoreConfig],
        history: ContextHistory,
        tools: Callable[[], SessionTools],
        limit: Callable[[], int | None],
        attachments: SessionAttachments,
    ) -> None:
        self._session_id = session_id
        self.attachments = attachments  # the session's files: read, stored, sent
        self._config = config
        self._history = history
        self._tools = tools
        self._limit = limit

    def build(self, input_items: list[Item] | None = None, *, turn: bool = False) -> ModelRequest:
        """A request with a turn's fields for ``input_items`` (default: the history). ``turn``:
        a turn's own request, which may ask the server to compact inside its response."""
        config = self._config()
        items = self._history.raw_items() if input_items is None else input_items
        return ModelRequest(
            model=config.model,
            instructions=config.instructions,
            # Every call paired with an output (items are never mutated in place).
            input=self.attachments.wire(pair_tool_calls(items).items, config),
            tools=self._tools().specs(),
            prompt_cache_key=self._session_id,
            reasoning_effort=config.reasoning_effort,
            include_encrypted_reasoning=config.is_reasoning_model,
            context_management=self.server_compaction() if turn else None,
        )

    def initial_context(self) -> list[Item]:
        """The environment block a history starts with (none when tools are off)."""
        tools = self._tools()
        if not tools.enabled:
            return []
        return [user_message(tools.environment_context())]

    def client_compacts(self) -> bool:
        """Whether Coco compacts automatically before and inside turns: not when the server
        does it inside the response (it would always come first at the same limit). An
        overflow is still Coco's to recover from."""
        return self._config().auto_compact and self.server_compaction() is None

    def server_compaction(self) -> list[dict[str, Any]] | None:
        """``context_management`` for a turn request (spec section 4, form c), when the user
        turned server-side compaction on and the server speaks the Responses API."""
        config = self._config()
        limit = self._limit()
        if not (
            config.server_side_compaction
            and config.remote_compaction
            and config.auto_compact
            and config.wire_api == "responses"
            and limit is not None
        ):
            return None
        return [{"type": "compaction", "compact_threshold": limit}]
