"""What a process's first model request needs loaded, loaded ahead of it.

The first turn of a process imported the provider, the SDK's resource classes (its typed
request and event models: 57 ms for the Responses API, 15 ms for Chat Completions) and the
async HTTP stack (20 ms), and built the TLS context (20-40 ms), all on the thread that sent the
message: the window froze for about 0.2 s at the first message. :func:`preload` does the same
work and is safe in any thread; the front end runs it in a worker thread once the window is
idle, and the first request finds it done (or waits for an import under way, never longer than
it would have taken).
"""

from __future__ import annotations

import importlib
import logging

log = logging.getLogger(__name__)

# Both wire APIs: the settings can switch between them, and the one not in use costs 15-60 ms
# of a worker thread once.
MODULES = (
    "app.core.providers.responses",
    "app.core.providers.chat",
    "openai.resources.responses.responses",
    "openai.resources.chat.completions.completions",
    "httpcore2._backends.anyio",
    "anyio._backends._asyncio",
)


def import_modules(modules: tuple[str, ...]) -> None:
    """Import each of ``modules``; one that fails is logged and skipped, left for the code
    that needs it to meet (and report) again."""
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:
            log.warning("Could not load %s ahead of its first use", name, exc_info=True)


def preload(modules: tuple[str, ...] = MODULES) -> None:
    """Import ``modules`` and build the shared TLS context. A failure is logged and left for
    the first request to meet (and report) again."""
    import_modules(modules)
    try:
        from .providers.openai_client import shared_tls_context

        shared_tls_context()
    except Exception:
        log.warning("Could not build the TLS context ahead of the first request", exc_info=True)
