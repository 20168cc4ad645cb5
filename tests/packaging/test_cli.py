"""The command line: --version, --help, and the options reaching the launcher."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app import __version__
from app.command_line import build_parser, read_plain
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
    from app.ui.runtime.single_instance import SingleInstance, server_name

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


# Command lines argparse reads; the plain reader must give the same namespace or decline.
_COMMAND_LINES = [
    [],
    ["--data-dir", "/tmp/p"],
    ["--data-dir=/tmp/p", "--offline"],
    ["--offline", "--session", "abc", "--log-level", "debug", "--self-test"],
    ["--log-level=warning", "--session=a=b", "--data-dir", "~/x y"],
    ["--session", "one", "--session", "two"],  # the last one counts
    ["--offline", "--offline"],
    ["--data-dir", "rel/path", "--log-level", "Info"],
    ["--data", "/tmp/p"],  # an abbreviation: argparse's
    ["--session", "-x"],  # a value that looks like an option
    ["--data-dir=-x"],
    ["--data-dir="],
    ["--log-level", "loud"],
    ["--offline=yes"],
    ["--session"],
    ["--help"],
    ["-h"],
    ["--version"],
    ["stray"],
    ["--", "--offline"],
    ["--unknown"],
]


def _argparse(argv: list[str]) -> dict[str, Any] | str:
    try:
        return vars(build_parser().parse_args(argv))
    except SystemExit as exc:
        return f"exit {exc.code}"


@pytest.mark.parametrize("argv", _COMMAND_LINES, ids=lambda argv: " ".join(argv) or "(none)")
def test_a_plain_command_line_reads_as_argparse_reads_it(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    expected = _argparse(argv)
    plain = read_plain(argv)
    if plain is not None:
        assert vars(plain) == expected
    elif isinstance(expected, dict):  # declined: argparse answers, with the same result
        assert vars(parse_args(argv)) == expected
    capsys.readouterr()


def test_the_usual_command_lines_build_no_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    import app.command_line

    def no_parser() -> None:
        raise AssertionError("built the parser")

    monkeypatch.setattr(app.command_line, "build_parser", no_parser)
    for argv in ([], ["--data-dir", "/tmp/p"], ["--session=abc", "--offline"],
                 ["--log-level", "debug", "--self-test", "--data-dir=/tmp/p"]):
        assert parse_args(argv) == read_plain(argv)
    with pytest.raises(AssertionError):
        parse_args(["--help"])  # help, version and errors: the parser's
