"""Server behaviour: recording, waiting, routing, empty queues, windows, lifecycle."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading

import httpx2
import openai
import pytest

from app.demo import CompactReply, Fault, ModelServer, Reply


async def test_requests_are_recorded_with_body_path_and_headers(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(Reply(text="ok"))
    server.enqueue(CompactReply())
    await client.responses.create(
        model="m", input="hello", instructions="sys", extra_headers={"X-Coco-Request-Kind": "turn"}
    )
    await client.responses.compact(model="m", input="hello")

    first, second = server.requests
    assert (first.method, first.path, first.endpoint) == ("POST", "/v1/responses", "responses")
    assert first.body == {"model": "m", "input": "hello", "instructions": "sys"}
    assert first.headers["x-coco-request-kind"] == "turn"
    assert first.headers["authorization"] == "Bearer test"
    assert "Bearer test" not in repr(first)  # recorded requests never print the key
    assert second.path == "/v1/responses/compact" and second.endpoint == "compact"
    assert server.requests_to("responses") == [first]
    assert server.requests_to("compact") == [second]


async def test_wait_for_requests_blocks_until_they_arrive(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(Reply(text="a"), endpoint="chat")
    waiter = asyncio.ensure_future(asyncio.to_thread(server.wait_for_requests, 1, "chat", 5.0))
    await asyncio.sleep(0)
    assert not waiter.done()
    await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    [recorded] = await waiter
    assert recorded.endpoint == "chat"
    with pytest.raises(TimeoutError, match="expected 2 request"):
        server.wait_for_requests(2, endpoint="chat", timeout=0.05)


async def test_empty_queue_answers_500_and_still_records(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    with pytest.raises(
        openai.InternalServerError, match="scripted server: no reply queued for responses"
    ):
        await client.responses.create(model="m", input="x", stream=True)
    with pytest.raises(
        openai.InternalServerError, match="scripted server: no reply queued for compact"
    ):
        await client.responses.compact(model="m", input="x")
    assert [r.endpoint for r in server.requests] == ["responses", "compact"]


async def test_unknown_path_is_an_openai_style_404(server: ModelServer) -> None:
    async with httpx2.AsyncClient() as http:
        response = await http.post(f"{server.url}/nope", json={})
        wrong_method = await http.get(f"{server.url}/responses")
    assert response.status_code == 404
    assert response.json() == {
        "error": {
            "message": "Invalid URL (POST /v1/nope)",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    }
    assert wrong_method.status_code == 404
    assert server.requests[0].endpoint is None


async def test_invalid_json_body_is_a_400(server: ModelServer) -> None:
    server.enqueue(Reply(text="unused"))
    async with httpx2.AsyncClient() as http:
        response = await http.post(
            f"{server.url}/responses",
            content=b"{not json",
            headers={"content-type": "application/json"},
        )
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"
    assert server.queued("responses") == 1


async def test_model_list(server: ModelServer, client: openai.AsyncOpenAI) -> None:
    models = await client.models.list()
    [model] = models.data
    assert (model.id, model.object, model.owned_by) == ("coco-demo", "model", "coco")
    assert model.created > 0


async def test_context_window_overflows_before_consuming_the_queue(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.context_window = 10
    server.enqueue(Reply(text="for the retry"))
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model="m", input="x" * 100)
    assert caught.value.code == "context_length_exceeded"
    assert server.queued("responses") == 1
    server.context_window = None
    assert (
        await client.responses.create(model="m", input="x" * 100)
    ).output_text == "for the retry"


def test_enqueue_rejects_unknown_endpoints_and_items(server: ModelServer) -> None:
    with pytest.raises(ValueError, match="endpoint"):
        server.enqueue(Reply(text="x"), endpoint="embeddings")
    with pytest.raises(TypeError):
        server.enqueue("just text", endpoint="responses")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="mode"):
        ModelServer("live")  # type: ignore[arg-type]


def test_binds_loopback_on_a_free_port_and_stops_cleanly() -> None:
    srv = ModelServer().start()
    assert srv.url == f"http://127.0.0.1:{srv.port}/v1" and srv.port > 0
    assert srv.context_window is None and ModelServer("demo").context_window == 16000
    srv.stop()
    srv.stop()  # idempotent
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", srv.port), timeout=1):
        pass


async def test_client_leaving_mid_stream_leaves_the_server_healthy(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(Reply(text="y" * 200, chunk_size=1, delay_per_chunk=0.02))
    server.enqueue(Reply(text="next"))
    stream = await client.responses.create(model="m", input="x", stream=True)
    async for event in stream:
        if event.type == "response.output_text.delta":
            break
    await stream.close()
    await asyncio.to_thread(server.wait_idle, 3.0)
    assert (await client.responses.create(model="m", input="x")).output_text == "next"


async def test_concurrent_requests_are_served_in_parallel(
    server: ModelServer, client: openai.AsyncOpenAI
) -> None:
    server.enqueue(Fault.hang(5))
    server.enqueue(Reply(text="quick"))
    slow = await client.responses.create(model="m", input="x", stream=True)
    quick = await asyncio.wait_for(client.responses.create(model="m", input="y"), timeout=3)
    assert quick.output_text == "quick"
    await slow.close()


def test_thread_safe_enqueue_and_snapshot() -> None:
    with ModelServer() as srv:
        workers = [
            threading.Thread(target=lambda: [srv.enqueue(Reply(text="t")) for _ in range(50)])
            for _ in range(4)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        assert srv.queued("responses") == 200
        assert srv.requests == []


def test_package_imports_no_qt() -> None:
    code = (
        "import sys, app.demo, app.demo.__main__; "
        "assert not [m for m in sys.modules if m.startswith(('PySide6', 'qasync'))]"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
