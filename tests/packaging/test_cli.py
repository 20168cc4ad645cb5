"""The command line: --version, --help, and the options reaching the launcher."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app import __version__
from app.main import main, parse_args


def test_version_prints_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"Coco {__version__}"


def test_help_lists_every_option(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for option in ("--version", "--data-dir", "--offline", "--session", "--log-level",
                   "--self-test"):
        assert option in out


def test_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--log-level", "LOUD"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_options_parse(tmp_path: Path) -> None:
    args = parse_args(["--data-dir", str(tmp_path), "--offline", "--session", "abc",
                       "--log-level", "debug"])
    assert args.data_dir == tmp_path
    assert args.offline and args.session == "abc" and args.log_level == "DEBUG"
    assert parse_args([]).log_level is None  # default: INFO to the file, WARNING to stderr


def test_qt_application_identity(qapp: Any) -> None:
    from app.appinfo import APP_ID
    from app.main import configure_application

    configure_application(qapp)
    assert qapp.applicationName() == "Coco"
    assert qapp.applicationVersion() == __version__
    # Wayland matches windows to the menu entry by this id.
    assert qapp.desktopFileName() == APP_ID


@pytest.fixture
def restore_logging() -> Any:
    import logging

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in [h for h in root.handlers if h not in handlers]:
        root.removeHandler(handler)
        handler.close()
    root.setLevel(level)
    logging.captureWarnings(False)


def test_second_launch_on_the_same_profile_focuses_the_first_and_exits_0(
    qtbot: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], restore_logging: None
) -> None:
    from app.ui.single_instance import SingleInstance, server_name

    running = SingleInstance(server_name(tmp_path.resolve()))
    assert running.claim()
    try:
        with qtbot.waitSignal(running.message_received, timeout=3000) as received:
            code = main(["--data-dir", str(tmp_path), "--session", "s-123"])
        assert code == 0
        assert received.args == ["focus s-123"]
        assert "already running" in capsys.readouterr().out
        assert not (tmp_path / "sessions").exists()  # it opened nothing of its own
    finally:
        running.release()
