"""Coco's offline model server: the OpenAI wire protocol on loopback, for demos and tests.

``ModelServer(mode="demo")`` answers with a deterministic demo model (no key, no network);
``ModelServer(mode="scripted")`` answers with queued ``Reply`` / ``CompactReply`` / ``Fault``
items so tests run the real ``openai`` client code through exact scenarios.
"""

from .handler import RecordedRequest
from .script import CompactReply, Fault, Reply, ToolCall
from .server import ModelServer

__all__ = ["CompactReply", "Fault", "ModelServer", "RecordedRequest", "Reply", "ToolCall"]
