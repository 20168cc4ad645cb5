"""The offline demo model: deterministic, readable answers built from the conversation.

It is not clever; it is honest about what it sees. ``demo_model`` decides which kind of answer a
request gets: it restates the latest message, refers back to earlier ones (and to a compaction
summary when there is one) and answers simple questions about the conversation (``answers``),
calls the workspace tools when asked about files and searches the conversation when asked about
what left its view (``tool_calls``), describes tool output (``tool_results``), answers in the
Markdown asked for (``formats``, ``markdown``, ``code``), and writes a real extractive handoff
summary when asked to compact.

The demo knows nothing beyond the conversation, so what it writes is built from the request
itself (its key words and sentences) or, for a bare formatting request ("show me a Python code
block and a Markdown list"), about Coco: its compaction triggers, things to try. Either way the
answer is real Markdown of the kind asked for, so the renderer shows what it can do.
"""
