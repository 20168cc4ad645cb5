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

    async def takes_images(self, config: CoreConfig) -> bool:
        """Whether the model takes images, its server asked the first time."""
        key = (config.base_url, config.model)
        if key not in self._said:
            said: bool | None = None
            if not config.base_url.startswith(_OPENAI):
                info = await probe_server(
                    config.base_url, config.model, api_key=config.api_key.get_secret_value()
                )
                said = info.supports_vision
            self._said[key] = said
        return self.known(config)

    def known(self, config: CoreConfig) -> bool:
        """Whether the model takes images as far as is known now, without asking: its
        server's word if it was asked, else the setting."""
        said = self._said.get((config.base_url, config.model))
        return said is True or (said is None and config.accepts_images)

    async def refusal(self, config: CoreConfig, images: list[str]) -> str | None:
        """The words refusing a message with ``images`` (file names) when the model does
        not take images, else None."""
        if not images or await self.takes_images(config):
            return None
        said = self._said.get((config.base_url, config.model))
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
