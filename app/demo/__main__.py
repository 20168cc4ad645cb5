"""``python -m app.demo``: run the offline model server until Ctrl-C."""

from __future__ import annotations

import argparse
import threading

from .server import ModelServer

_SIGNAL_CHECK_S = 0.25


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, serve, and return the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m app.demo", description="Coco's offline OpenAI-compatible model server."
    )
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: any free)")
    parser.add_argument(
        "--context-window",
        type=int,
        default=16000,
        help="tokens above which requests fail with context_length_exceeded",
    )
    parser.add_argument(
        "--tps",
        type=float,
        default=60.0,
        help="streaming speed in tokens per second (0: as fast as possible)",
    )
    parser.add_argument("--model", default="coco-demo", help="model id to advertise")
    parser.add_argument(
        "--scripted",
        action="store_true",
        help="scripted mode (every request fails: nothing is queued)",
    )
    args = parser.parse_args(argv)
    server = ModelServer(
        "scripted" if args.scripted else "demo",
        port=args.port,
        context_window=args.context_window if args.context_window > 0 else None,
        tokens_per_second=args.tps if args.tps > 0 else None,
        model=args.model,
        record_limit=100,
    )
    try:
        server.start()
    except OSError as exc:
        parser.exit(2, f"cannot listen on port {args.port}: {exc.strerror or exc}\n")
    print(f"Coco offline model server listening on {server.url}", flush=True)
    # Wait in short slices: Ctrl-C can be delivered to a thread other than this
    # one, and then only this thread's next Python step raises it; an
    # endless wait would never take that step.
    forever = threading.Event()
    try:
        while not forever.wait(_SIGNAL_CHECK_S):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
