"""What a settings change means for an open conversation, in words."""

from __future__ import annotations

from ..config import CoreConfig
from ..system.secrets import redact_url


def describe_config_change(old: CoreConfig, new: CoreConfig, *, started: bool = True) -> str:
    """What a settings change means for the conversation, in words ("" when nothing the
    session uses changed): the model it continues with (``started``: it has a message; a new
    empty one does not continue, it will use the model), or that the settings now apply."""
    if (old.model, old.base_url, old.wire_api) != (new.model, new.base_url, new.wire_api):
        if new.demo_hints:
            where = " (the offline demo model)"
        else:
            server = new.provider_name or redact_url(
                new.base_url, [new.api_key.get_secret_value()]
            )
            where = f" on {server}"
        if not started:
            return f"This conversation will use {new.model}{where}."
        return f"This conversation continues with {new.model}{where}."
    if old == new or _quiet(old) == _quiet(new):
        return ""  # a tool always allowed from the approval card: the card said so
    mcp = _mcp_change(old, new)
    if mcp and _quiet(old).model_copy(update=_mcp_fields(new)) == _quiet(new):
        return mcp
    return "Settings applied to this session."


def _quiet(config: CoreConfig) -> CoreConfig:
    """``config`` without the always-allowed tools (their change needs no words)."""
    servers = tuple(s.model_copy(update={"always_allow": frozenset()}) for s in config.mcp_servers)
    return config.model_copy(update={"mcp_servers": servers})


def _mcp_fields(config: CoreConfig) -> dict[str, object]:
    quiet = _quiet(config)
    return {"mcp_servers": quiet.mcp_servers, "mcp_errors": config.mcp_errors,
            "mcp_allow_read_only": config.mcp_allow_read_only}


def _mcp_change(old: CoreConfig, new: CoreConfig) -> str:
    """The MCP servers' change in words: added, removed, turned on or off, changed."""
    before = {s.name: s for s in old.mcp_servers}
    after = {s.name: s for s in new.mcp_servers}
    said: list[str] = []
    for name, spec in after.items():
        was = before.get(name)
        if was is None:
            said.append(f"{name!r} added")
        elif was.enabled != spec.enabled:
            said.append(f"{name!r} turned {'on' if spec.enabled else 'off'}")
        elif was.connection_key() != spec.connection_key():
            said.append(f"{name!r} restarted with its new settings")
        elif was.disabled_tools != spec.disabled_tools:
            said.append(f"{name!r} offers other tools")
    said += [f"{name!r} removed" for name in before if name not in after]
    return f"MCP servers: {', '.join(said)}." if said else ""
