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
    if old != new:
        return "Settings applied to this session."
    return ""
