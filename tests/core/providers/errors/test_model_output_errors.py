"""llama.cpp's "the model produced output that does not match the expected format": a model
error, said in words and never retried."""

from __future__ import annotations

import json

import httpx2
import openai
import pytest

from app.core.providers.base import ModelRequest, ProviderError
from app.core.providers.chat import ChatCompletionsProvider
from app.core.providers.errors.table import classify_error_payload, classify_exception
from app.core.providers.sampling import sample
from app.demo import Fault, ModelServer, Reply

BASE_URL = "http://127.0.0.1:8080/v1"
# What llama-server sends inside the stream (its error chunk, verbatim shape).
LLAMA_FORMAT_ERROR = {
    "code": 500,
    "message": "The model produced output that does not match the expected Hermes 2 Pro format",
    "type": "server_error",
}
LLAMA_ARGUMENTS_ERROR = "Failed to parse tool call arguments as JSON: [json.exception.parse_error]"


@pytest.mark.parametrize(
    "payload",
    [
        LLAMA_FORMAT_ERROR,
        {"error": LLAMA_FORMAT_ERROR},
        {"code": 500, "message": LLAMA_ARGUMENTS_ERROR},
    ],
)
def test_unparsable_model_output_is_a_model_output_error(payload: dict[str, object]) -> None:
    error = classify_error_payload(payload, base_url=BASE_URL)
    assert error.category == "model_output"
    assert not error.retryable
    assert error.message.startswith("the model produced a malformed tool call")
    assert "would give the same result" in error.message
    # The server's own words stay, for whoever needs the detail.
    assert str(payload.get("message") or LLAMA_FORMAT_ERROR["message"]) in error.message


def test_other_server_errors_stay_retryable_server_errors() -> None:
    error = classify_error_payload(
        {"code": 500, "message": "Failed to parse messages: x"}, base_url=BASE_URL
    )
    assert error.category == "server"
    assert error.retryable


def test_http_500_with_the_format_message_is_a_model_output_error() -> None:
    request = httpx2.Request("POST", f"{BASE_URL}/chat/completions")
    response = httpx2.Response(
        500, content=json.dumps({"error": LLAMA_FORMAT_ERROR}).encode(), request=request
    )
    exc = openai.OpenAI(api_key="x", base_url=BASE_URL)._make_status_error_from_response(response)
    error = classify_exception(exc, BASE_URL)
    assert error.category == "model_output"
    assert error.status == 500
    assert not error.retryable


async def test_inband_format_error_fails_once_without_retries(server: ModelServer) -> None:
    server.enqueue(Fault.inband_error(str(LLAMA_FORMAT_ERROR["message"])), endpoint="chat")
    server.enqueue(Reply(text="never asked for"), endpoint="chat")
    provider = ChatCompletionsProvider(server.url, "")
    retries: list[int] = []
    try:
        with pytest.raises(ProviderError) as info:
            await sample(
                provider,
                ModelRequest(model="m", instructions="", input=[]),
                max_retries=5,
                base_delay=0.0,
                on_retry=lambda attempt, _max, _error: retries.append(attempt),
            )
    finally:
        await provider.close()
    assert info.value.category == "model_output"
    assert "malformed tool call" in info.value.message
    assert retries == []
    assert len(server.requests_to("chat")) == 1
