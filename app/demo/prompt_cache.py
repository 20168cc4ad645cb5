"""OpenAI's prompt caching, as the server reports it: the tokens of the prefix a request shares
with the previous request on its cache key (``prompt_cache_key``, else the model)."""

from __future__ import annotations

import json
import threading

from .wire import Json, estimate_tokens, item_count_text

# OpenAI caches prompt prefixes of at least 1024 tokens, in steps of 128.
_CACHE_MIN_TOKENS = 1024
_CACHE_STEP = 128
_CACHE_KEYS_KEPT = 64


class PromptCache:
    """The prefix last sent on each cache key, for the most recent keys."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._prefixes: dict[str, list[tuple[str, int]]] = {}

    def cached_tokens(self, body: Json, instructions: str, items: list[Json]) -> int:
        """Tokens of the prefix this request shares with the previous one on its cache key."""
        key = str(body.get("prompt_cache_key") or body.get("model") or "")
        pieces = [(instructions, estimate_tokens(instructions))] + [
            (json.dumps(item, sort_keys=True), estimate_tokens(item_count_text(item)))
            for item in items
        ]
        with self._lock:
            previous = self._prefixes.pop(key, [])
            self._prefixes[key] = pieces
            while len(self._prefixes) > _CACHE_KEYS_KEPT:
                self._prefixes.pop(next(iter(self._prefixes)))
        shared = 0
        for (old, _), (new, cost) in zip(previous, pieces, strict=False):
            if old != new:
                break
            shared += cost
        return 0 if shared < _CACHE_MIN_TOKENS else shared // _CACHE_STEP * _CACHE_STEP
