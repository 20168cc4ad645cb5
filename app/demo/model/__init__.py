"""The offline demo model's answers in Markdown: what a request asks for (``formats``), the
answer made of those elements (``markdown``) and the code blocks in it (``code``).

The demo knows nothing beyond the conversation, so what it writes is built from the request
itself (its key words and sentences) or, for a bare formatting request ("show me a Python code
block and a Markdown list"), about Coco: its compaction triggers, things to try. Either way the
answer is real Markdown of the kind asked for, so the renderer shows what it can do.
"""
