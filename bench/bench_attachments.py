"""Attachments (issue 38): a 20 MB PDF and ten 4K screenshots attached in the window (as a drop
does), sent, drawn with their thumbnails; then the session holding them reopened.

Figures, in the window (fresh interpreters, the scripted loopback server):

- the window's longest main-thread block (a 5 ms timer's longest gap) from the files' arrival
  until their chips show their cost, the message is sent, answered, and every thumbnail on
  screen is drawn: ≤ 16 ms;
- resuming that session from the list of a window that has been up a while (what the first
  message of a process loads ahead is loaded): from the click (``open_session``) to the
  window's first paint showing it, ≤ 2 s (the resume target), and the longest block until its
  thumbnails are drawn, ≤ 16 ms (the same conversation without its files, reopened the same
  way, is measured beside it: what the attachments add);
- the core alone: ``Session.open`` to its first event for the session with the attachments,
  against the same conversation without them (the files are named in the rollout, never
  inlined): ≤ 1.5×.

The PDF is what a 20 MB PDF usually is: pages of text and a large embedded picture. The
screenshots are 3840x2160 PNGs drawn like a desktop (panels, lines of text, a photo-like area),
1-3 MB each. ``--scale`` below 1 shrinks the PDF and takes fewer screenshots.
"""

from __future__ import annotations

import asyncio
import io
import random
import sys
import time
from pathlib import Path
from typing import Any

from bench._common import Target, core_config, main, result, run_worker, temp_dir, worker_reply
from bench.bench_long_lines import _preloaded

PDF_MB = 20
SCREENSHOTS = 10


def make_pdf(path: Path, megabytes: float, pages: int = 40) -> Path:
    """A PDF of ``pages`` pages of text with one embedded picture making it ``megabytes``."""
    from pypdf import PdfWriter
    from pypdf.generic import (
        DecodedStreamObject,
        DictionaryObject,
        NameObject,
        NumberObject,
        StreamObject,
    )

    rng = random.Random(38)
    writer = PdfWriter()
    font = writer._add_object(DictionaryObject({
        NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
        NameObject("/BaseFont"): NameObject("/Helvetica"),
    }))
    side = max(16, int((megabytes * 2**20 / 3) ** 0.5))
    picture = StreamObject()
    picture._data = rng.randbytes(side * side * 3)
    picture.update({
        NameObject("/Type"): NameObject("/XObject"), NameObject("/Subtype"): NameObject("/Image"),
        NameObject("/Width"): NumberObject(side), NameObject("/Height"): NumberObject(side),
        NameObject("/ColorSpace"): NameObject("/DeviceRGB"),
        NameObject("/BitsPerComponent"): NumberObject(8),
    })
    image = writer._add_object(picture)
    words = ["the", "report", "shows", "revenue", "growth", "in", "every", "region", "while",
             "costs", "held", "steady"]
    for number in range(pages):
        page = writer.add_blank_page(612, 792)
        resources = {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        if number == 0:
            resources[NameObject("/XObject")] = DictionaryObject({NameObject("/Im1"): image})
        page[NameObject("/Resources")] = DictionaryObject(resources)
        lines = [" ".join(rng.choice(words) for _ in range(12)) for _ in range(45)]
        ops = ["BT", "/F1 10 Tf", "14 TL", "40 760 Td", *(f"({line}) Tj T*" for line in lines)]
        ops.append("ET")
        if number == 0:
            ops += ["q 200 0 0 200 300 300 cm /Im1 Do Q"]
        stream = DecodedStreamObject()
        stream.set_data("\n".join(ops).encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
    out = io.BytesIO()
    writer.write(out)
    path.write_bytes(out.getvalue())
    return path


def make_screenshot(path: Path, seed: int, size: tuple[int, int] = (3840, 2160)) -> Path:
    """A 4K screenshot-like PNG: a desktop with windows, lines of text and a photo-like area."""
    from PIL import Image, ImageDraw

    rng = random.Random(seed)
    width, height = size
    image = Image.new("RGB", size, (rng.randrange(200, 250),) * 3)
    draw = ImageDraw.Draw(image)
    for _ in range(8):
        x, y = rng.randrange(width - 900), rng.randrange(height - 600)
        draw.rectangle((x, y, x + 900, y + 600), fill=(250, 250, 250), outline=(90, 90, 90))
        draw.rectangle((x, y, x + 900, y + 32), fill=(rng.randrange(256), 90, 160))
        for line in range(24):
            draw.text((x + 12, y + 44 + line * 22), f"line {line} of window {seed}: "
                      + "".join(rng.choice("abcdefghij  ") for _ in range(70)), fill=(20, 20, 20))
    photo = Image.frombytes("RGB", (640, 400), rng.randbytes(640 * 400 * 3)).resize((1280, 800))
    image.paste(photo, (rng.randrange(width - 1280), rng.randrange(height - 800)))
    image.save(path, "PNG", compress_level=6)
    return path


def make_files(folder: Path, scale: float) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    pdf = make_pdf(folder / "report.pdf", max(0.5, PDF_MB * scale))
    shots = [
        make_screenshot(folder / f"screenshot-{n}.png", n)
        for n in range(max(2, round(SCREENSHOTS * min(1.0, scale * 10))))
    ]
    return [pdf, *shots]


def _thumbnails_drawn(window: Any) -> bool:
    """Every thumbnail of the rows on screen has its picture."""
    for row in window.transcript.message_rows("user"):
        widget = row._widget
        strip = getattr(widget, "attachments", None) if widget is not None else None
        if strip is not None and not all(t.loaded for t in strip.thumbnails):
            return False
    return True


async def _until(check: Any, timeout: float = 300.0) -> None:
    deadline = time.perf_counter() + timeout
    while not check():
        if time.perf_counter() > deadline:
            raise TimeoutError("the window did not get there")
        await asyncio.sleep(0.005)


def send_in_window(data_dir: Path, files: list[str]) -> dict[str, Any]:
    """Attach ``files`` (a drop), send, wait for the answer and the thumbnails; the longest
    block meanwhile, and the session's id."""
    from bench._server_proc import ServerProcess
    from bench._ui import StallProbe, close_window, make_context, make_window, run_on_qt

    answer = data_dir.parent / "answer.txt"
    answer.write_text("I see a report and ten screenshots.", encoding="utf-8")
    # The server in a process of its own, as a real one is: parsing a request of megabytes
    # of images must not take this process's interpreter.
    with ServerProcess(answer, copies=1, chunk_size=8) as server:
        context = make_context(data_dir.parent, server.url)

        async def scenario() -> dict[str, Any]:
            window = make_window(context)
            window.show()
            await window.open_session(None)
            await _preloaded()  # a person looks at the new window before attaching
            probe = StallProbe()
            probe.start()
            start = time.perf_counter()
            tray = window.composer.attachments
            tray.add_paths(files)
            await _until(lambda: all(c.ready or c.error for c in tray.chips))
            inspected = time.perf_counter() - start
            errors = [c.error for c in tray.chips if c.error]
            window.composer.edit.setPlainText("What do these show?")
            window.composer.submit()
            await _until(lambda: window.busy)
            await _until(lambda: not window.busy)
            await _until(lambda: _thumbnails_drawn(window))
            await asyncio.sleep(0.1)
            probe.stop()
            total = time.perf_counter() - start
            session_id = window.session.id
            await close_window(window)
            return {"block_ms": probe.longest_ms(), "over_16": probe.over_ms(16.0),
                    "inspect_s": inspected, "total_s": total, "session_id": session_id,
                    "errors": errors}

        return run_on_qt(scenario)


def resume_in_window(data_dir: Path, session_id: str) -> dict[str, Any]:
    """Open the session as a click in the list does: time to its first paint, and the longest
    block until its thumbnails are drawn."""
    from bench._ui import (
        PaintWatch,
        StallProbe,
        close_window,
        make_context,
        make_window,
        run_on_qt,
        transcript_paint_targets,
    )

    context = make_context(data_dir.parent, "http://127.0.0.1:9/v1")

    async def scenario() -> dict[str, Any]:
        window = make_window(context)
        await window.open_session(None)
        window.show()
        watch = PaintWatch(*transcript_paint_targets(window))
        await watch.wait_after(0.0, timeout=30)
        await _preloaded()  # the session is opened from the list of a window up for a while
        probe = StallProbe()
        probe.start()
        start = time.perf_counter()
        await window.open_session(session_id)
        painted = await watch.wait_after(time.perf_counter())
        await _until(lambda: bool(window.transcript.message_rows("user")))
        await _until(lambda: _thumbnails_drawn(window))
        await asyncio.sleep(0.1)
        probe.stop()
        await close_window(window)
        return {"paint_s": painted - start, "block_ms": probe.longest_ms()}

    return run_on_qt(scenario)


async def _core_open(data_dir: Path, session_id: str) -> float:
    from app.core import Session

    config = core_config("http://127.0.0.1:9/v1", data_dir)
    start = time.perf_counter()
    session = await Session.open(config, session_id=session_id)
    async for _event in session.events():
        break
    elapsed = time.perf_counter() - start
    await session.close()
    return elapsed


def core_resume(data_dir: Path, with_files: str, without: str) -> dict[str, Any]:
    """Session.open to its first event, with the attachments and without (best of three)."""
    from bench._common import warm_counter

    warm_counter()
    times: dict[str, list[float]] = {"with": [], "without": []}
    for _ in range(3):
        for key, session_id in (("without", without), ("with", with_files)):
            times[key].append(asyncio.run(_core_open(data_dir, session_id)))
    return {key: min(values) for key, values in times.items()}


def _plain_copy(data_dir: Path, session_id: str) -> str:
    """The same conversation without its attachments (their parts dropped), as a new
    session beside it: what a session costs to open when it holds no files."""
    import json
    import uuid

    sessions = data_dir / "sessions"
    source = sessions / f"{session_id}.jsonl"
    copy_id = str(uuid.uuid4())
    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        text = json.dumps(record).replace(session_id, copy_id)
        record = json.loads(text)
        item = (record.get("payload") or {}).get("item")
        if isinstance(item, dict) and isinstance(item.get("content"), list):
            item["content"] = [
                p for p in item["content"]
                if not (isinstance(p, dict) and p.get("type") == "coco_attachment")
            ]
        lines.append(json.dumps(record))
    (sessions / f"{copy_id}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return copy_id


def run(scale: float = 1.0) -> dict[str, Any]:
    with temp_dir() as root:
        files = make_files(root / "files", scale)
        size_mb = sum(f.stat().st_size for f in files) / 2**20
        pdf_mb = files[0].stat().st_size / 2**20
        data_dir = root / "data"
        sent = run_worker(
            "bench.bench_attachments", "--send", str(data_dir), *map(str, files)
        )
        if sent["errors"]:
            raise RuntimeError("; ".join(sent["errors"]))
        resumed = run_worker("bench.bench_attachments", "--resume", str(data_dir),
                             sent["session_id"])
        plain = _plain_copy(data_dir, sent["session_id"])
        plain_resumed = run_worker("bench.bench_attachments", "--resume", str(data_dir), plain)
        core = run_worker("bench.bench_attachments", "--core", str(data_dir),
                          sent["session_id"], plain)
    ratio = core["with"] / core["without"]
    targets = [
        Target("window's longest block, attach and send", sent["block_ms"], 16.0, "ms"),
        Target("resume to first paint", resumed["paint_s"], 2.0, "s"),
        Target("window's longest block, resume and thumbnails", resumed["block_ms"], 16.0, "ms"),
        Target("core resume with / without the attachments", ratio, 1.5, "×"),
    ]
    return result(
        "attachments",
        workload=f"a {pdf_mb:.0f} MB PDF and {len(files) - 1} 4K "
        f"screenshots ({size_mb:.0f} MB in all) attached, sent, drawn; the session reopened",
        reference="16 ms (one frame at 60 Hz)",
        figure="window's longest block while attaching, sending and drawing",
        measured=sent["block_ms"] / 1000,
        reference_value=0.016,
        targets=targets,
        extra={
            "send_block_ms": round(sent["block_ms"], 2),
            "send_blocks_over_16ms": sent["over_16"],
            "inspect_s": round(sent["inspect_s"], 3),
            "send_total_s": round(sent["total_s"], 3),
            "resume_paint_s": round(resumed["paint_s"], 3),
            "resume_block_ms": round(resumed["block_ms"], 2),
            "resume_without_attachments_paint_s": round(plain_resumed["paint_s"], 3),
            "resume_without_attachments_block_ms": round(plain_resumed["block_ms"], 2),
            "core_resume_with_s": round(core["with"], 4),
            "core_resume_without_s": round(core["without"], 4),
        },
        scale=scale,
        unit="s",
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--send":
        worker_reply(send_in_window(Path(sys.argv[2]), sys.argv[3:]))
    elif len(sys.argv) > 1 and sys.argv[1] == "--resume":
        worker_reply(resume_in_window(Path(sys.argv[2]), sys.argv[3]))
    elif len(sys.argv) > 1 and sys.argv[1] == "--core":
        worker_reply(core_resume(Path(sys.argv[2]), sys.argv[3], sys.argv[4]))
    else:
        main(run)
