"""A streaming request whose body Coco writes itself, sent by the SDK's own client.

The SDK writes a request's body with the standard library's ``json`` on the event loop, which
is the window's thread: for a long history (a few thousand items, a megabyte or two) 10 to 50
ms at every request, in one block. Here the body is written with orjson (``fastjson.dumps``:
milliseconds) and handed to the client as bytes; the client still sends it as it sends any
request (the key, its headers, timeouts, its exceptions for an HTTP error), and the stream
comes back as the SDK's ``AsyncStream`` over the raw response, as a typed call gives it. The
body is written in steps with the event loop handed over between them, and an item holding
images (megabytes of data URLs) in a worker thread (``request_body``), so the window's thread
is never held by it. A body holding images is sent in its pieces (``BodyPieces``), never
copied into one object.
"""

from __future__ import annotations

from typing import Any

from openai import AsyncOpenAI, AsyncStream, RequestOptions

from .request_body import encode_request, streamed


async def stream_post(
    client: AsyncOpenAI, path: str, body: dict[str, Any], extra_headers: dict[str, str] | None
) -> AsyncStream[Any]:
    """POST ``body`` (wire JSON) to ``path`` and return the response's stream, unread."""
    content, length = streamed(await encode_request(body))  # in steps: the window draws
    headers = {**(extra_headers or {}), **length}
    options: RequestOptions = {}
    if headers:
        options["headers"] = headers
    return await client.post(
        path, cast_to=object, content=content, options=options, stream=True,
        stream_cls=AsyncStream[Any],
    )
