"""The attachments package: kinds told from bytes, text decoding, the image rule, storage by
hash, the wire shapes and the stand-in text."""

from __future__ import annotations

import base64
import random
from pathlib import Path

import pytest

from app.core.attachments.documents import decode_text, pdf_file_text
from app.core.attachments.errors import AttachmentError
from app.core.attachments.images import image_tokens, prepare_image_file, scaled_size
from app.core.attachments.parts import attachment_message, stand_in, with_stand_ins
from app.core.attachments.reading import read_attachment
from app.core.attachments.store import _B64_PIECE, AttachmentStore, data_url
from app.core.attachments.wire import stand_in_items, wire_items
from app.core.compaction.paths.prune import prune_tool_outputs
from app.core.items import attachment_parts, item_count_parts, user_message
from app.core.providers.chat_request import chat_messages
from app.core.system.worker_process import WorkerProcessDied
from tests.attachment_files import pdf_bytes, write_image, write_png


def test_openai_image_rule() -> None:
    assert scaled_size(3840, 2160) == (1365, 768)
    assert image_tokens(3840, 2160) == 85 + 170 * 6
    assert scaled_size(4096, 8192) == (768, 1536)  # fit 2048, then shortest side 768
    assert image_tokens(512, 512) == 255
    assert image_tokens(513, 100) == 85 + 170 * 2
    assert scaled_size(100, 50) == (100, 50)  # never enlarged


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        ("héllo wörld\n".encode(), "utf-8"),
        ("\ufeffhéllo\n".encode(), "utf-8"),
        ("héllo\n".encode("utf-16"), "utf-16"),
    ],
)
def test_text_in_any_encoding_is_read(data: bytes, encoding: str) -> None:
    text, found = decode_text(data, "a.txt")
    assert "llo" in text and found == encoding


def test_a_legacy_encoding_is_detected_and_binary_refused() -> None:
    text, _ = decode_text("Grüße aus Köln, schöne Straße und Bäume.\n".encode("cp1252"), "a.txt")
    assert "Köln" in text
    with pytest.raises(AttachmentError, match="not a text file"):
        decode_text(b"\x7fELF\x00\x01\x02" * 100, "prog.txt")


def test_storage_is_by_content_hash_and_parts_hold_no_bytes(tmp_path: Path) -> None:
    store = AttachmentStore(tmp_path / "s.files")
    first = read_attachment(write_png(tmp_path / "a.png", 300, 200), store)
    twin = tmp_path / "b.png"
    twin.write_bytes((tmp_path / "a.png").read_bytes())
    second = read_attachment(twin, store)
    assert first["file"] == second["file"] and first["name"] != second["name"]
    assert [p.name for p in store.folder.iterdir()] == [first["file"]]
    assert "data" not in str(first) and first["sent_file"] == first["file"]  # small: as is


@pytest.mark.parametrize(
    "size", [0, 1, 2, _B64_PIECE - 1, _B64_PIECE, _B64_PIECE + 1, 3 * _B64_PIECE + 2]
)
def test_a_data_url_encoded_in_pieces_is_the_whole_encoded_at_once(size: int) -> None:
    data = random.Random(size).randbytes(size)
    url = data_url(data, "image/png")
    assert url == "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    assert base64.b64decode(url.split(",", 1)[1]) == data


def test_a_file_is_read_and_stored_whole(tmp_path: Path) -> None:
    """Past the first bytes its kind is told from: every byte, once."""
    text = "".join(f"line {n}: {'é' if n % 7 else 'x'} of the notes\n" for n in range(20_000))
    path = tmp_path / "notes.md"
    path.write_text(text, encoding="utf-8")
    store = AttachmentStore(tmp_path / "s.files")
    part = read_attachment(path, store)
    assert part["text"] == text and part["size"] == path.stat().st_size
    assert store.path(part["file"]).read_bytes() == path.read_bytes()


def test_webp_jpeg_gif_are_taken_and_a_big_jpeg_is_scaled(tmp_path: Path) -> None:
    store = AttachmentStore(tmp_path / "s.files")
    for fmt, suffix in (("WEBP", "webp"), ("GIF", "gif"), ("JPEG", "jpg")):
        part = read_attachment(write_image(tmp_path / f"i.{suffix}", 64, 32, fmt), store)
        assert part["kind"] == "image" and part["width"] == 64
    big = read_attachment(write_image(tmp_path / "big.jpg", 4000, 3000, "JPEG"), store)
    assert (big["sent_width"], big["sent_height"]) == (1024, 768)
    assert big["sent_mime"] == "image/jpeg" and big["sent_file"] != big["file"]


def _message(tmp_path: Path) -> dict:
    store = AttachmentStore(tmp_path / "s.files")
    notes = tmp_path / "notes.md"
    notes.write_text("alpha\nbeta\n")
    parts = [read_attachment(notes, store), read_attachment(write_png(tmp_path / "a.png", 20, 10), store)]
    return attachment_message("look", parts), store


def test_wire_shapes_on_both_apis(tmp_path: Path) -> None:
    message, store = _message(tmp_path)
    wired = wire_items([message], store.data_url)[0]
    assert [p["type"] for p in wired["content"]] == ["input_text", "input_text", "input_image"]
    assert wired["content"][1]["text"] == '<file name="notes.md">\nalpha\nbeta\n\n</file>'
    assert attachment_parts(message)  # the history's own item is unchanged
    chat = chat_messages("", [wired])
    assert chat[0]["content"][2]["type"] == "image_url"
    assert chat[0]["content"][2]["image_url"]["url"].startswith("data:image/png;base64,")
    # two user messages in a row, one with an image, merge as parts (strict templates)
    merged = chat_messages("", [user_message("first"), wired])
    assert len(merged) == 1 and merged[0]["content"][0] == {"type": "text", "text": "first"}


def test_stand_ins_name_the_attachment(tmp_path: Path) -> None:
    message, _ = _message(tmp_path)
    named = stand_in_items([message])[0]
    texts = [p["text"] for p in named["content"]]
    assert texts[1] == "[Attached text file no longer shown: notes.md, text file, 3 lines, 11 bytes]"
    assert texts[2].startswith("[Attached image no longer shown: a.png, PNG image 20x10")
    assert "alpha" not in str(named)
    assert with_stand_ins(user_message("x")) == user_message("x")
    assert "alpha" in item_count_parts(message)[0]  # the file's text is counted


def test_prune_names_an_old_large_file_like_an_old_tool_output(tmp_path: Path) -> None:
    store = AttachmentStore(tmp_path / "s.files")
    big = tmp_path / "log.txt"
    big.write_text("a line of the log\n" * 400)
    old = attachment_message("read this", [read_attachment(big, store)])
    items = [old, user_message("two"), user_message("three")]
    counts = [2000, 5, 5]
    found = prune_tool_outputs(items, counts, count_item=lambda i: len(str(i)) // 4)
    assert found is not None
    pruned, _ = found
    assert stand_in(attachment_parts(old)[0]) in str(pruned.items[0])
    assert "a line of the log" not in str(pruned.items[0]) and pruned.outputs == 1


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[tuple[object, ...]]:
    """The jobs run in the worker process, each as (function, *arguments), run as they are."""
    from app.core.attachments import reading

    jobs: list[tuple[object, ...]] = []
    run = reading.run_in_process

    def spy(function: object, *args: object) -> object:
        jobs.append((function, *args))
        return run(function, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(reading, "run_in_process", spy)
    return jobs


def test_a_pdfs_text_is_read_in_the_worker_process(
    tmp_path: Path, asked: list[tuple[object, ...]]
) -> None:
    """pypdf is pure Python: seconds of the interpreter for a large file, so the text is read
    in the worker process; what it reads there is the file the part stores."""
    report = tmp_path / "report.pdf"
    report.write_bytes(pdf_bytes([["Quarterly figures"], ["zebracorn revenue rose"]]))
    part = read_attachment(report, AttachmentStore(tmp_path / "store"))
    assert part["pages"] == 2 and "zebracorn revenue rose" in part["text"]
    assert asked == [(pdf_file_text, str(report), report.stat().st_size, "report.pdf")]


def test_a_pdf_changed_while_it_is_read_is_refused_in_words(tmp_path: Path) -> None:
    report = tmp_path / "report.pdf"
    data = pdf_bytes([["Quarterly figures"]])
    report.write_bytes(data)
    assert pdf_file_text(str(report), len(data), "report.pdf")[1] == 1
    with pytest.raises(AttachmentError, match="report.pdf changed while it was read"):
        pdf_file_text(str(report), len(data) + 1, "report.pdf")
    report.unlink()
    with pytest.raises(AttachmentError, match="report.pdf could not be read: No such file"):
        pdf_file_text(str(report), len(data), "report.pdf")


@pytest.mark.parametrize(
    ("name", "reader"), [("huge.pdf", "the PDF reader"), ("shot.png", "the image reader")]
)
def test_a_file_that_stops_its_reader_is_refused_and_nothing_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, reader: str
) -> None:
    from app.core.attachments import reading

    def died(*_args: object) -> object:
        raise WorkerProcessDied("A process in the process pool was terminated abruptly")

    monkeypatch.setattr(reading, "run_in_process", died)
    path = tmp_path / name
    if name.endswith(".pdf"):
        path.write_bytes(pdf_bytes([["x"]]))
    else:
        write_png(path, 40, 30)
    store = AttachmentStore(tmp_path / "store")
    with pytest.raises(AttachmentError) as refused:
        read_attachment(path, store)
    assert refused.value.message.startswith(
        f"{name} could not be read: reading it stopped {reader} (A process"
    )
    assert not [f for f in (tmp_path / "store").glob("**/*") if f.is_file()]

def test_an_images_decoding_and_scaling_run_in_the_worker_process(
    tmp_path: Path, asked: list[tuple[object, ...]]
) -> None:
    """Pillow held the window's interpreter for 30-90 ms of a 4K screenshot: the image is read
    again, decoded and scaled in the worker process; an image sent as it is comes back
    without its bytes, and is stored once."""
    store = AttachmentStore(tmp_path / "store")
    small = write_png(tmp_path / "small.png", 300, 200)
    big = write_image(tmp_path / "big.jpg", 4000, 3000, "JPEG")
    parts = [read_attachment(small, store), read_attachment(big, store)]
    assert asked == [
        (prepare_image_file, str(path), path.stat().st_size, path.name) for path in (small, big)
    ]
    assert parts[0]["sent_file"] == parts[0]["file"]
    assert store.path(parts[0]["file"]).read_bytes() == small.read_bytes()
    assert (parts[1]["sent_width"], parts[1]["sent_height"]) == (1024, 768)
    assert parts[1]["sent_file"] != parts[1]["file"]


def test_an_image_read_again_comes_back_without_the_bytes_it_was_sent_as(tmp_path: Path) -> None:
    small = write_png(tmp_path / "small.png", 30, 20)
    size = small.stat().st_size
    image = prepare_image_file(str(small), size, "small.png")
    assert image.sent == b"" and (image.width, image.sent_width) == (30, 30)
    big = write_image(tmp_path / "big.jpg", 4000, 3000, "JPEG")
    scaled = prepare_image_file(str(big), big.stat().st_size, "big.jpg")
    assert scaled.sent.startswith(b"\xff\xd8") and scaled.sent_width == 1024
    with pytest.raises(AttachmentError, match="small.png changed while it was read"):
        prepare_image_file(str(small), size - 1, "small.png")
    small.unlink()
    with pytest.raises(AttachmentError, match="small.png could not be read: No such file"):
        prepare_image_file(str(small), size, "small.png")


async def test_a_history_is_looked_through_for_images_off_the_event_loops_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before each turn, the images of the history are loaded to be sent; a long history's
    items are looked through in the worker thread too, not on the window's."""
    import threading

    from app.core.attachments import session_files

    part = read_attachment(write_png(tmp_path / "a.png", 30, 20), AttachmentStore(tmp_path / "f"))
    message = attachment_message("see", [part])
    files = session_files.SessionAttachments(tmp_path / "f", count=len)  # as on a resume
    assert files.store.data_url(part["sent_file"]) is None
    looked: list[threading.Thread] = []
    real = session_files.image_files

    def noted(items):  # type: ignore[no-untyped-def]
        looked.append(threading.current_thread())
        return real(items)

    monkeypatch.setattr(session_files, "image_files", noted)
    await files.preload([user_message("hi"), message])
    assert looked and threading.main_thread() not in looked
    assert files.store.data_url(part["sent_file"]) is not None
