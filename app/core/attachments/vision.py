"""Whether the model takes images: its server's word where it gives one (llama.cpp's
``/props``, LM Studio, Ollama), else the ``accepts_images`` setting; asked once per server
and model."""

from __future__ import annotations

from ..config import CoreConfig
from ..providers.probe import probe_server

_OPENAI = "https://api.openai.com"


class VisionCheck:
    """Remembers what each server said about each model."""

    def __init__(self) -> None:
        self._said: dict[tuple[str, str], bool | None] = {}

    async def refusal(self, config: CoreConfig, images: list[str]) -> str | None:
        """The words refusing a message with ``images`` (file names) when the model does
        not take images, else None."""
        if not images:
            return None
        key = (config.base_url, config.model)
        if key not in self._said:
            said: bool | None = None
            if not config.base_url.startswith(_OPENAI):
                info = await probe_server(
                    config.base_url, config.model, api_key=config.api_key.get_secret_value()
                )
                said = info.supports_vision
            self._said[key] = said
        said = self._said[key]
        if said is True or (said is None and config.accepts_images):
            return None
        why = (
            "its server says it does not read images"
            if said is False
            else "the settings say it does not read images"
        )
        return (
            f"Your message was not sent: the model {config.model} cannot see images ({why}), "
            f"and it holds {', '.join(images)}. Remove the image, or choose a model that "
            "reads images."
        )
