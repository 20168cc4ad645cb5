"""The user turn: the task that runs one message (``task``), its sampling loop (``loop``), the
requests it sends (``request``), the tool calls it runs (``tool_call``) and the items it adds
(``items``)."""


class TurnFailed(Exception):
    """A turn ended with an error that was already reported as an event."""
