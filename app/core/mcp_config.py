"""MCP servers as configured: one server as the ``mcpServers`` JSON describes it (the shape Claude Desktop, Cursor,
LM Studio and Codex read): ``command``/``args``/``env``/``cwd`` for a local server on stdio,
``url``/``headers`` for streamable HTTP, plus Coco's own keys (``disabled``, ``disabledTools``,
``alwaysAllow``, ``timeout``); an existing ``mcp.json`` or Claude Desktop config read for
import; and the secrets of ``env`` and ``headers`` split off for the key store, so settings.json
holds a placeholder. Secret values never print: they are ``SecretStr``."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, SecretStr

# Seconds a server may take to answer one request (start-up and tool calls) before the call
# ends with a timeout result; a server's ``timeout`` key overrides it.
DEFAULT_TIMEOUT = 60.0
MIN_TIMEOUT = 1.0
MAX_TIMEOUT = 3600.0
# What a secret value reads as in settings.json: the value itself is in the key store.
SECRET_PLACEHOLDER = "<in Coco's key store>"

Transport = Literal["stdio", "http"]


class McpConfigError(ValueError):
    """A server entry or a config that does not read, in words."""


class McpServerSpec(BaseModel):
    """A configured server, its secrets resolved (still hidden from any print)."""

    model_config = ConfigDict(frozen=True)

    name: str
    transport: Transport
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, SecretStr], ...] = ()
    cwd: str = ""
    url: str = ""
    headers: tuple[tuple[str, SecretStr], ...] = ()
    enabled: bool = True
    disabled_tools: frozenset[str] = frozenset()
    always_allow: frozenset[str] = frozenset()
    timeout: float = DEFAULT_TIMEOUT

    def env_values(self) -> dict[str, str]:
        return {key: value.get_secret_value() for key, value in self.env}

    def header_values(self) -> dict[str, str]:
        return {key: value.get_secret_value() for key, value in self.headers}

    def secrets(self) -> list[str]:
        """The secret values, for scrubbing them out of any text shown or saved."""
        return [v.get_secret_value() for _, v in (*self.env, *self.headers) if len(v) >= 4]

    def connection_key(self) -> tuple[Any, ...]:
        """What a running connection depends on: a change restarts the server."""
        return (self.transport, self.command, self.args, self.env_values(), self.cwd,
                self.url, self.header_values(), self.timeout)


def secret_key(server: str, part: Literal["env", "headers"], key: str) -> str:
    """The name a server's secret is kept under in the key store."""
    return f"mcp:{server}:{part}:{key}"


def parse_server(
    name: str, entry: Any, secret: Callable[[str], str] = lambda _key: ""
) -> McpServerSpec:
    """The server ``name`` of an ``mcpServers`` object; ``secret`` reads a value kept in the key
    store (for env and header values saved as the placeholder). Raises ``ValueError`` in words."""
    if not isinstance(entry, Mapping):
        raise McpConfigError(f"MCP server {name!r}: its entry must be a JSON object")
    kind = str(entry.get("type") or entry.get("transport") or "").lower()
    url = _text(name, entry, "url") or _text(name, entry, "serverUrl")
    command = _text(name, entry, "command")
    if kind == "sse":
        raise McpConfigError(f"MCP server {name!r}: the old SSE transport is not supported; "
                         "use the server's streamable HTTP address")
    if command and url:
        raise McpConfigError(f"MCP server {name!r}: give either a command or a url, not both")
    if not command and not url:
        raise McpConfigError(f"MCP server {name!r}: needs a command (local) or a url (HTTP)")
    if url and not url.startswith(("http://", "https://")):
        raise McpConfigError(f"MCP server {name!r}: its url must start with http:// or https://")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str | int | float) for a in args):
        raise McpConfigError(f"MCP server {name!r}: args must be a list of strings")
    timeout = entry.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise McpConfigError(f"MCP server {name!r}: timeout must be a number of seconds")
    if not MIN_TIMEOUT <= float(timeout) <= MAX_TIMEOUT:
        raise McpConfigError(f"MCP server {name!r}: timeout must be between "
                         f"{MIN_TIMEOUT:g} and {MAX_TIMEOUT:g} seconds")
    return McpServerSpec(
        name=name,
        transport="http" if url else "stdio",
        command=command,
        args=tuple(str(a) for a in args),
        env=_secrets(name, entry, "env", secret),
        cwd=_text(name, entry, "cwd"),
        url=url,
        headers=_secrets(name, entry, "headers", secret),
        enabled=not bool(entry.get("disabled", False)),
        disabled_tools=_names(name, entry, "disabledTools"),
        always_allow=_names(name, entry, "alwaysAllow"),
        timeout=float(timeout),
    )


def parse_servers(
    servers: Mapping[str, Any], secret: Callable[[str], str] = lambda _key: ""
) -> tuple[list[McpServerSpec], dict[str, str]]:
    """Every server of an ``mcpServers`` object that reads, and the reasons of those that do
    not, by name (one bad entry never hides the others)."""
    specs: list[McpServerSpec] = []
    errors: dict[str, str] = {}
    for name, entry in servers.items():
        try:
            specs.append(parse_server(str(name), entry, secret))
        except ValueError as exc:
            errors[str(name)] = str(exc)
    return specs, errors


def _text(name: str, entry: Mapping[str, Any], key: str) -> str:
    value = entry.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise McpConfigError(f"MCP server {name!r}: {key} must be a string")
    return value.strip()


def _names(name: str, entry: Mapping[str, Any], key: str) -> frozenset[str]:
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise McpConfigError(f"MCP server {name!r}: {key} must be a list of tool names")
    return frozenset(value)


def _secrets(
    name: str, entry: Mapping[str, Any], part: Literal["env", "headers"],
    secret: Callable[[str], str],
) -> tuple[tuple[str, SecretStr], ...]:
    value = entry.get(part, {})
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise McpConfigError(f"MCP server {name!r}: {part} must be an object of names and values")
    pairs: list[tuple[str, SecretStr]] = []
    for key, raw in value.items():
        text = raw if isinstance(raw, str) else str(raw)
        if text == SECRET_PLACEHOLDER:
            text = secret(secret_key(name, part, str(key)))
        pairs.append((str(key), SecretStr(text)))
    return tuple(pairs)


def read_config_text(text: str) -> dict[str, Any]:
    """The servers of a pasted or opened config: Claude Desktop's and Cursor's
    ``{"mcpServers": {...}}``, VS Code's ``{"servers": {...}}`` or a bare object of servers.
    Raises ``ValueError`` in words."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise McpConfigError(f"Not valid JSON (line {exc.lineno}, column {exc.colno}).") from None
    if not isinstance(data, dict):
        raise McpConfigError("The config must be a JSON object.")
    servers = data.get("mcpServers", data.get("servers", data))
    if not isinstance(servers, dict) or not servers:
        raise McpConfigError("No MCP servers found (expected an \"mcpServers\" object).")
    if not all(isinstance(entry, dict) for entry in servers.values()):
        raise McpConfigError("Each MCP server must be a JSON object with a command or a url.")
    return {str(name): dict(entry) for name, entry in servers.items()}


def split_secrets(
    servers: dict[str, Any],
) -> tuple[dict[str, Any], dict[str, str]]:
    """``servers`` with every ``env`` and ``headers`` value replaced by the placeholder, and the
    values taken out, by their key-store name (placeholders already there are left alone)."""
    clean: dict[str, Any] = {}
    secrets: dict[str, str] = {}
    for name, entry in servers.items():
        if not isinstance(entry, dict):
            clean[name] = entry
            continue
        entry = dict(entry)
        parts: tuple[Literal["env", "headers"], ...] = ("env", "headers")
        for part in parts:
            values = entry.get(part)
            if not isinstance(values, dict):
                continue
            kept: dict[str, str] = {}
            for key, value in values.items():
                text = value if isinstance(value, str) else str(value)
                if text != SECRET_PLACEHOLDER:
                    secrets[secret_key(name, part, str(key))] = text
                kept[str(key)] = SECRET_PLACEHOLDER
            entry[part] = kept
        clean[name] = entry
    return clean, secrets


def secret_names(servers: Mapping[str, Any]) -> set[str]:
    """The key-store names of every ``env`` and ``headers`` value of ``servers``: those of a
    server removed or a value taken out are deleted from the key store when saved."""
    names: set[str] = set()
    parts: tuple[Literal["env", "headers"], ...] = ("env", "headers")
    for name, entry in servers.items():
        for part in parts:
            values = entry.get(part) if isinstance(entry, Mapping) else None
            if isinstance(values, Mapping):
                names.update(secret_key(str(name), part, str(key)) for key in values)
    return names


# ---------------------------------------------------------------------- edits of mcpServers
# What the settings page changes in the ``mcpServers`` object: each returns a new object (the
# one given is left alone), keeping every key it does not change, unknown ones included.


def with_server_enabled(servers: Mapping[str, Any], name: str, enabled: bool) -> dict[str, Any]:
    """``servers`` with ``name`` turned on or off (Coco's ``disabled`` key)."""
    return _with_entry(servers, name, lambda entry: _set_flag(entry, "disabled", not enabled))


def with_tool_enabled(
    servers: Mapping[str, Any], name: str, tool: str, enabled: bool
) -> dict[str, Any]:
    """``servers`` with the tool ``tool`` of ``name`` offered to the model or not."""
    return _with_entry(servers, name, lambda e: _set_member(e, "disabledTools", tool, not enabled))


def with_always_allowed(
    servers: Mapping[str, Any], name: str, tool: str, allowed: bool
) -> dict[str, Any]:
    """``servers`` with the tool ``tool`` of ``name`` run without asking, or asking again."""
    return _with_entry(servers, name, lambda e: _set_member(e, "alwaysAllow", tool, allowed))


def import_config(servers: Mapping[str, Any], text: str) -> tuple[dict[str, Any], str]:
    """``servers`` with the servers of a pasted or opened config added (one of the same name
    replaced), and what was done, in words. Entries that do not read are left out and named
    with their reason; raises ``McpConfigError`` when no server of ``text`` reads."""
    found = read_config_text(text)
    merged = dict(servers)
    added: list[str] = []
    replaced: list[str] = []
    refused: list[str] = []
    for name, entry in found.items():
        try:
            parse_server(name, entry)
        except ValueError as exc:
            refused.append(str(exc))
            continue
        (replaced if name in merged else added).append(name)
        merged[name] = entry
    if not added and not replaced:
        raise McpConfigError("Nothing imported. " + " ".join(refused))
    said = []
    if added:
        said.append(f"Added {_listed(added)}.")
    if replaced:
        said.append(f"Replaced {_listed(replaced)}.")
    if refused:
        said.append("Left out: " + " ".join(refused))
    return merged, " ".join(said)


def _listed(names: list[str]) -> str:
    return ", ".join(repr(name) for name in names)


def _with_entry(
    servers: Mapping[str, Any], name: str, change: Callable[[dict[str, Any]], None]
) -> dict[str, Any]:
    merged = dict(servers)
    entry = merged.get(name)
    if not isinstance(entry, Mapping):
        raise McpConfigError(f"No MCP server {name!r} is configured.")
    entry = dict(entry)
    change(entry)
    merged[name] = entry
    return merged


def _set_flag(entry: dict[str, Any], key: str, on: bool) -> None:
    if on:
        entry[key] = True
    else:
        entry.pop(key, None)


def _set_member(entry: dict[str, Any], key: str, member: str, present: bool) -> None:
    value = entry.get(key)
    names = [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
    if present and member not in names:
        names.append(member)
    elif not present:
        names = [v for v in names if v != member]
    if names:
        entry[key] = names
    else:
        entry.pop(key, None)
