"""The protocol of tools from MCP servers: a call waiting for the user's approval and the
answer to it, and the servers' states (starting, ready with their tools, failed with the last
lines of their stderr)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .base import _Event, _Op

ApprovalDecision = Literal["once", "always", "deny"]


class ApproveToolCall(_Op):
    """The user's answer to ``tool_approval_requested``: run the call this once, always allow
    this tool (for this server), or deny it (the model reads the denial)."""

    op: Literal["approve_tool_call"] = "approve_tool_call"
    call_id: str
    decision: ApprovalDecision


class ToolApprovalRequested(_Event):
    """A tool call waits for the user: the window shows the server, tool and arguments with
    Allow once, Always allow this tool and Deny, and answers with ``ApproveToolCall``."""

    type: Literal["tool_approval_requested"] = "tool_approval_requested"
    call_id: str
    server: str
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    turn_id: str = ""
    description: str = ""
    destructive: bool = False


class ToolApprovalResolved(_Event):
    """A waiting call was answered (``cancelled``: the turn was stopped first)."""

    type: Literal["tool_approval_resolved"] = "tool_approval_resolved"
    call_id: str
    decision: Literal["once", "always", "deny", "cancelled"]
    server: str = ""
    tool: str = ""


class McpToolInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    description: str = ""
    enabled: bool = True
    read_only: bool = False
    destructive: bool = False
    # Runs without asking: in the server's ``alwaysAllow``, or answered ``always`` this session.
    always_allowed: bool = False


class McpServerInfo(BaseModel):
    """One configured server as the settings page lists it."""

    model_config = ConfigDict(frozen=True)

    name: str
    state: Literal["starting", "ready", "failed", "stopped", "disabled", "invalid"]
    transport: Literal["stdio", "http", ""] = ""
    tools: list[McpToolInfo] = Field(default_factory=list)
    error: str = ""
    stderr: list[str] = Field(default_factory=list)


class McpServers(_Event):
    """The MCP servers' states, sent whenever one changes."""

    type: Literal["mcp_servers"] = "mcp_servers"
    servers: list[McpServerInfo] = Field(default_factory=list)
