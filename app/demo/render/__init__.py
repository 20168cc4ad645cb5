"""Writing a ``Reply`` / ``CompactReply`` / ``Fault`` in each endpoint's wire format.

``responses`` streams follow the API's event order (created, in_progress, per item added →
deltas → done, completed); ``chat`` streams send role, content and tool-call deltas, a finish
chunk, the optional usage chunk and ``[DONE]``; ``compact`` answers in one JSON object.
``exchange`` holds what they all know about the request, ``faults`` the failures that look the
same on every endpoint.
"""
