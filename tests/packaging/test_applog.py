"""The log file: where it goes, its level, and the filter that keeps secrets out of it."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.applog import REDACTED, SecretScrubFilter, scrub, setup_logging
from app.paths import AppPaths

KEY = "sk-proj-Abc123DEF456ghi789JKL"


@pytest.fixture
def log_file(tmp_path: Path) -> Iterator[Path]:
    root = logging.getLogger()
    old_level = root.level
    path = setup_logging(tmp_path / "logs", stderr=False)
    assert path is not None
    try:
        yield path
    finally:
        for handler in [h for h in root.handlers if getattr(h, "coco_handler", False)]:
            root.removeHandler(handler)
            handler.close()
        root.setLevel(old_level)


def read(path: Path) -> str:
    for handler in logging.getLogger().handlers:
        handler.flush()
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"using key {KEY} now", KEY),
        ("Authorization: Bearer abc.def-ghi_jkl", "abc.def-ghi_jkl"),
        ("headers={'authorization': 'Bearer tok_12345678'}", "tok_12345678"),
        ('{"api_key": "plain-secret-value"}', "plain-secret-value"),
        ("api_key=another-secret-1", "another-secret-1"),
        ("x-api-key: anthropic-like-key", "anthropic-like-key"),
        ("sk-ant-api03-ZZZZZZZZZZZZ in a message", "sk-ant-api03-ZZZZZZZZZZZZ"),
        ("google AIzaSyA1234567890abcdefghijklmnopqrs", "AIzaSyA1234567890abcdefghijklmnopqrs"),
    ],
)
def test_scrub_removes_things_that_look_like_keys(text: str, secret: str) -> None:
    cleaned = scrub(text)
    assert secret not in cleaned
    assert REDACTED in cleaned


def test_scrub_leaves_ordinary_text_alone() -> None:
    text = "Compacted 12,000 → 800 tokens in 2.1 s; ask-me-anything and skip-list are fine"
    assert scrub(text) == text


def test_log_file_is_in_the_profile_log_dir_and_private(tmp_path: Path, log_file: Path) -> None:
    assert log_file == tmp_path / "logs" / "coco.log"
    logging.getLogger("coco.test").info("hello from the test")
    assert "hello from the test" in read(log_file)
    assert AppPaths.resolve(tmp_path).log_file == log_file
    if os.name != "nt":
        assert log_file.stat().st_mode & 0o077 == 0  # readable by its owner only


def test_default_level_is_info_so_debug_lines_stay_out(log_file: Path) -> None:
    logging.getLogger("coco.test").debug("a debug line with message contents")
    logging.getLogger("coco.test").info("an info line")
    text = read(log_file)
    assert "an info line" in text
    assert "message contents" not in text


def test_secrets_are_scrubbed_in_messages_args_and_tracebacks(log_file: Path) -> None:
    logger = logging.getLogger("coco.test")
    logger.warning("key in the message %s", KEY)
    logger.warning("bearer in args: %s", "Authorization: Bearer secret-token-value")
    try:
        raise RuntimeError(f"server rejected {KEY}")
    except RuntimeError:
        logger.exception("request failed")
    logging.getLogger("httpx").warning("third-party line api_key=leaky-value-1")
    text = read(log_file)
    assert KEY not in text
    assert "secret-token-value" not in text
    assert "leaky-value-1" not in text
    assert text.count(REDACTED) >= 4
    assert "RuntimeError" in text  # the traceback itself is still there


def test_filter_survives_a_bad_format_string() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "%d items %s", ("oops",), None)
    assert SecretScrubFilter().filter(record)
    assert "oops" in record.getMessage()


def test_setup_twice_does_not_duplicate_lines(tmp_path: Path, log_file: Path) -> None:
    setup_logging(tmp_path / "logs", stderr=False)
    logging.getLogger("coco.test").info("only once")
    assert read(log_file).count("only once") == 1


def test_unwritable_log_dir_falls_back_to_stderr(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the log folder should be")
    root = logging.getLogger()
    old_level = root.level
    try:
        assert setup_logging(blocker / "logs", stderr=True) is None
        assert any(getattr(h, "coco_handler", False) for h in root.handlers)
    finally:
        for handler in [h for h in root.handlers if getattr(h, "coco_handler", False)]:
            root.removeHandler(handler)
        root.setLevel(old_level)
