"""MCP tools as the providers take them: a name namespaced by its server within the APIs' rule
(``^[a-zA-Z0-9_-]{1,64}$``, the same for Responses and Chat Completions), and an input schema
every API and local server accepts (llama.cpp's chat templates and grammar included)."""

from __future__ import annotations

import copy
import hashlib
import re
from typing import Any

PREFIX = "mcp__"
SEPARATOR = "__"
MAX_NAME = 64
_INVALID = re.compile(r"[^a-zA-Z0-9_-]+")
NAME_RULE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
# Keys no API needs, some reject, and local templates print verbatim into the prompt.
_DROPPED_KEYS = ("$schema", "$id", "$comment", "examples")
_MAX_REF_DEPTH = 8


def tool_name(server: str, tool: str, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """``mcp__<server>__<tool>``, its characters made valid; a name too long or already
    ``taken`` is shortened and made unique with a hash of the server and tool."""
    base = f"{PREFIX}{_clean(server)}{SEPARATOR}{_clean(tool)}"
    if len(base) <= MAX_NAME and base not in taken:
        return base
    digest = hashlib.sha1(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{base[: MAX_NAME - len(digest) - 1]}_{digest}"


def _clean(part: str) -> str:
    return _INVALID.sub("_", part).strip("_") or "x"


def adapt_schema(schema: Any) -> dict[str, Any]:
    """An input schema every provider takes: an object at the top (``properties`` present),
    local ``$ref``s inlined, type lists reduced to one type plus ``nullable`` words, and keys
    no API needs left out. The original is not changed."""
    if not isinstance(schema, dict):
        return {"type": "object", "properties": {}}
    defs = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    result: dict[str, Any] = _adapt(copy.deepcopy(schema), defs, 0)
    for key in ("$defs", "definitions", "title"):
        result.pop(key, None)
    if result.get("type") != "object":
        # A top-level union or a non-object: wrapped the only way every API accepts.
        return {
            "type": "object",
            "properties": {"input": {**result, "description": "The tool's input."}},
            "required": ["input"],
        }
    result.setdefault("properties", {})
    required = result.get("required")
    if required is not None and not (
        isinstance(required, list) and all(isinstance(r, str) for r in required)
    ):
        result.pop("required")
    return result


def _adapt(node: Any, defs: dict[str, Any], depth: int) -> Any:
    if isinstance(node, list):
        return [_adapt(item, defs, depth) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        target = defs.get(name)
        if target is None or depth >= _MAX_REF_DEPTH:
            # An unresolvable or recursive reference: any value, described.
            return {"description": str(node.get("description", f"a {name}"))}
        merged = {**copy.deepcopy(target), **{k: v for k, v in node.items() if k != "$ref"}}
        return _adapt(merged, defs, depth + 1)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED_KEYS:
            continue
        if key in ("properties", "patternProperties") and isinstance(value, dict):
            # Property names are names, not keywords: each value is a schema.
            out[key] = {name: _adapt(sub, defs, depth) for name, sub in value.items()}
        else:
            out[key] = _adapt(value, defs, depth)
    kind = out.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"] or ["string"]
        out["type"] = kinds[0]
        if "null" in kind:
            out["description"] = (str(out.get("description", "")) + " (may be null)").strip()
    if out.get("type") == "object" and "properties" not in out and depth > 0:
        out.setdefault("additionalProperties", True)
    return out
