"""What both OpenAI-protocol providers share: the SDK client, error mapping, model list."""

from __future__ import annotations

import ssl
import threading

import httpx2
import openai

from .base import ProviderError
from .errors.table import classify_exception

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
        self._client = openai.AsyncOpenAI(
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
