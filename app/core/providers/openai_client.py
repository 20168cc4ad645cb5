"""What both OpenAI-protocol providers share: the SDK client, error mapping, model list."""

from __future__ import annotations

import asyncio
import ssl
import threading
from collections.abc import Mapping
from typing import Any

import httpx2
import openai
from openai import Omit

from .base import ProviderError
from .errors.table import classify_exception
from .request_body import BodyPieces, body_pieces, has_big_strings, streamed

_tls_lock = threading.Lock()
_tls_context: ssl.SSLContext | None = None


def shared_tls_context() -> ssl.SSLContext:
    """One TLS context for every provider in the process, built as the HTTP client builds its
    own (the system's CA certificates, ``SSL_CERT_FILE``/``SSL_CERT_DIR`` honoured). Building
    one loads the certificate bundle, 20–40 ms that every new session paid again on its first
    request, on the UI thread."""
    global _tls_context
    with _tls_lock:
        if _tls_context is None:
            import httpcore2

            _tls_context = httpcore2.default_ssl_context()
        return _tls_context


class _Client(openai.AsyncOpenAI):
    """The SDK's client, a body holding images serialized in a worker thread in short steps
    and sent in its pieces (``request_body``): the SDK would serialize it on the event loop's
    thread in one call."""

    async def _prepare_options(self, options: Any) -> Any:
        options = await super()._prepare_options(options)
        body, extra = options.json_data, options.extra_json
        if isinstance(body, dict) and isinstance(extra, dict):
            merged = {**body, **extra}  # as the SDK merges them (extra wins; Omit left out)
            body = {key: value for key, value in merged.items() if not isinstance(value, Omit)}
        mergeable = extra is None or isinstance(extra, dict)
        if isinstance(body, dict) and mergeable and has_big_strings(body):
            pieces = BodyPieces(await asyncio.to_thread(body_pieces, body))
            content, length = streamed(pieces)  # sent in its pieces, never joined
            options.content, options.json_data, options.extra_json = content, None, None
            headers = options.headers if isinstance(options.headers, Mapping) else {}
            options.headers = {**headers, **length}
        return options


class OpenAIClientProvider:
    """An ``openai.AsyncOpenAI`` client with SDK retries off (the core retries) and every
    failure turned into a ``ProviderError`` that never contains the key."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 600.0,
        default_headers: dict[str, str] | None = None,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        self.base_url = base_url
        self._secrets = (api_key,) if api_key else ()
        if http_client is None:
            http_client = openai.DefaultAsyncHttpxClient(
                base_url=base_url, timeout=timeout, verify=shared_tls_context()
            )
        self._client = _Client(
            base_url=base_url,
            # Local servers accept anything; the SDK refuses an empty key.
            api_key=api_key or "sk-no-key",
            max_retries=0,
            timeout=timeout,
            default_headers=default_headers,
            http_client=http_client,
        )

    def _error(self, exc: BaseException) -> ProviderError:
        return classify_exception(exc, self.base_url, secrets=self._secrets)

    async def list_models(self) -> list[str]:
        """Model ids the server offers (``GET /models``), sorted."""
        try:
            return sorted([model.id async for model in self._client.models.list()])
        except Exception as exc:
            raise self._error(exc) from exc

    async def close(self) -> None:
        """Release the HTTP connection pool."""
        await self._client.close()
