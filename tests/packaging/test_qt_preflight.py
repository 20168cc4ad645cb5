"""The check before Qt starts: missing libraries of the platform plugin and "no display" are said
in words. Fake environments, loaders and ``ldd`` output: no display is needed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.qt_preflight import (
    LIBRARY_PACKAGES,
    candidate_platforms,
    check,
    missing_libraries,
    packages_for,
)

REPO = Path(__file__).resolve().parents[2]

# ldd on PySide6 6.11's libqxcb.so on a Debian 12 machine without two xcb utility libraries.
LDD_TWO_MISSING = """\
\tlinux-vdso.so.1 (0x00007ffd2b3f5000)
\tlibQt6XcbQpa.so.6 => /venv/PySide6/Qt/plugins/platforms/../../lib/libQt6XcbQpa.so.6 (0x00007f3d)
\tlibGL.so.1 => /lib/x86_64-linux-gnu/libGL.so.1 (0x00007f3dbf3f4000)
\tlibxcb-cursor.so.0 => /lib/x86_64-linux-gnu/libxcb-cursor.so.0 (0x00007f3dbf39a000)
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibxcb-image.so.0 => /lib/x86_64-linux-gnu/libxcb-image.so.0 (0x00007f3dbf38c000)
\tlibxcb-icccm.so.4 => not found
\t/lib64/ld-linux-x86-64.so.2 (0x00007f3dbf554000)
"""
DLOPEN_ERROR = "libxcb-icccm.so.4: cannot open shared object file: No such file or directory"


class Loader:
    """Fails for the plugins named in ``broken`` the way dlopen does; records what it loaded."""

    def __init__(self, broken: dict[str, str] | None = None) -> None:
        self.broken = broken or {}
        self.loaded: list[str] = []

    def __call__(self, path: str) -> None:
        name = Path(path).name
        if name in self.broken:
            raise OSError(self.broken[name])
        self.loaded.append(name)


def ldd_never_called(path: str) -> str:
    raise AssertionError(f"ldd ran on {path} although the plugin loaded")


@pytest.fixture
def plugins(tmp_path: Path) -> Path:
    for name in ("libqxcb.so", "libqwayland.so", "libqoffscreen.so"):
        (tmp_path / name).write_bytes(b"\x7fELF")
    return tmp_path


def test_platforms_follow_qt_qpa_platform_and_the_session_type() -> None:
    assert candidate_platforms({}) == ["xcb", "wayland"]
    assert candidate_platforms({"XDG_SESSION_TYPE": "wayland"}) == ["wayland", "xcb"]
    assert candidate_platforms({"QT_QPA_PLATFORM": "xcb"}) == ["xcb"]
    assert candidate_platforms({"QT_QPA_PLATFORM": "wayland;xcb"}) == ["wayland", "xcb"]
    assert candidate_platforms({"QT_QPA_PLATFORM": "offscreen:fontengine=freetype"}) == [
        "offscreen"
    ]


def test_ldd_output_gives_every_missing_library_once_in_order() -> None:
    assert missing_libraries(LDD_TWO_MISSING) == ["libxcb-icccm.so.4", "libxcb-keysyms.so.1"]
    assert missing_libraries("\tlibc.so.6 => /lib/libc.so.6 (0x1)\n") == []


def test_libraries_map_to_their_debian_packages() -> None:
    assert packages_for(["libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libgthread-2.0.so.0",
                         "libglib-2.0.so.0", "libunknown.so.9"]) == [
        "libxcb-icccm4", "libxcb-keysyms1", "libglib2.0-0"]


def test_missing_xcb_libraries_are_named_with_the_apt_get_line(plugins: Path) -> None:
    load = Loader({"libqxcb.so": DLOPEN_ERROR})
    problem = check({"DISPLAY": ":0", "QT_QPA_PLATFORM": "xcb"}, platform="linux",
                    plugin_dir=plugins, load=load, ldd=lambda path: LDD_TWO_MISSING,
                    display_reachable=lambda display: True)
    assert problem is not None
    assert problem.kind == "missing-libraries"
    assert problem.missing == ("libxcb-icccm.so.4", "libxcb-keysyms.so.1")
    assert problem.packages == ("libxcb-icccm4", "libxcb-keysyms1")
    assert "libxcb-icccm.so.4, libxcb-keysyms.so.1" in problem.message
    assert "sudo apt-get install libxcb-icccm4 libxcb-keysyms1" in problem.message
    assert "libxcb-cursor0" not in problem.message  # Qt's own, misleading, suggestion


def test_without_ldd_the_loader_error_still_names_the_library(plugins: Path) -> None:
    problem = check({"DISPLAY": ":0"}, platform="linux", plugin_dir=plugins,
                    load=Loader({"libqxcb.so": DLOPEN_ERROR}),
                    ldd=lambda path: "", display_reachable=lambda display: True)
    assert problem is not None
    assert problem.missing == ("libxcb-icccm.so.4",)
    assert "sudo apt-get install libxcb-icccm4" in problem.message


def test_a_library_without_a_known_package_is_still_named(plugins: Path) -> None:
    problem = check({"DISPLAY": ":0", "QT_QPA_PLATFORM": "xcb"}, platform="linux",
                    plugin_dir=plugins, load=Loader({"libqxcb.so": "cannot load"}),
                    ldd=lambda path: "\tlibfancy.so.3 => not found\n",
                    display_reachable=lambda display: True)
    assert problem is not None
    assert problem.missing == ("libfancy.so.3",)
    assert "apt-get" not in problem.message
    assert "libfancy.so.3" in problem.message


def test_no_display_at_all_is_said_before_anything_is_loaded(plugins: Path) -> None:
    load = Loader()
    problem = check({}, platform="linux", plugin_dir=plugins, load=load,
                    ldd=ldd_never_called, display_reachable=lambda display: True)
    assert problem is not None
    assert problem.kind == "no-display"
    assert "neither DISPLAY (X11) nor WAYLAND_DISPLAY (Wayland) is set" in problem.message
    assert "QT_QPA_PLATFORM=offscreen" in problem.message
    assert load.loaded == []
    xcb_only = check({"QT_QPA_PLATFORM": "xcb", "WAYLAND_DISPLAY": "wayland-0"},
                     platform="linux", plugin_dir=plugins, load=load, ldd=ldd_never_called)
    assert xcb_only is not None and xcb_only.kind == "no-display"
    assert "DISPLAY (X11) is not set; QT_QPA_PLATFORM is xcb" in xcb_only.message


def test_a_plugin_that_loads_passes_without_running_ldd(plugins: Path) -> None:
    load = Loader()
    assert check({"DISPLAY": ":0"}, platform="linux", plugin_dir=plugins, load=load,
                 ldd=ldd_never_called, display_reachable=lambda display: True) is None
    assert load.loaded == ["libqxcb.so"]


def test_wayland_that_loads_is_enough_when_xcb_cannot(plugins: Path) -> None:
    load = Loader({"libqxcb.so": DLOPEN_ERROR})
    env = {"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland"}
    assert check(env, platform="linux", plugin_dir=plugins, load=load,
                 ldd=lambda path: LDD_TWO_MISSING) is None
    assert load.loaded == ["libqwayland.so"]


def test_an_unreachable_x_display_is_said(plugins: Path) -> None:
    probed: list[str] = []

    def reachable(display: str) -> bool:
        probed.append(display)
        return False

    problem = check({"DISPLAY": ":7", "QT_QPA_PLATFORM": "xcb"}, platform="linux",
                    plugin_dir=plugins, load=Loader(), ldd=ldd_never_called,
                    display_reachable=reachable)
    assert probed == [":7"]
    assert problem is not None and problem.kind == "display-unreachable"
    assert "cannot connect to the X display ':7'" in problem.message


def test_headless_and_other_platforms_and_systems_are_left_to_qt(plugins: Path) -> None:
    load = Loader({"libqxcb.so": DLOPEN_ERROR})
    for env in ({"QT_QPA_PLATFORM": "offscreen"}, {"QT_QPA_PLATFORM": "vnc"},
                {"QT_QPA_PLATFORM": "xcb;offscreen", "DISPLAY": ":0"}):
        assert check(env, platform="linux", plugin_dir=plugins, load=load,
                     ldd=ldd_never_called) is None
    assert check({}, platform="win32", plugin_dir=plugins, load=load) is None
    assert check({}, platform="darwin", plugin_dir=plugins, load=load) is None
    assert load.loaded == []


def test_an_unknown_plugin_layout_is_left_to_qt(tmp_path: Path) -> None:
    load = Loader({"libqxcb.so": DLOPEN_ERROR})
    assert check({"DISPLAY": ":0"}, platform="linux", plugin_dir=tmp_path, load=load,
                 ldd=lambda path: LDD_TWO_MISSING) is None


def test_a_load_failure_that_is_no_missing_library_is_left_to_qt(plugins: Path) -> None:
    load = Loader({"libqxcb.so": "undefined symbol: xcb_foo"})
    assert check({"DISPLAY": ":0", "QT_QPA_PLATFORM": "xcb"}, platform="linux",
                 plugin_dir=plugins, load=load, ldd=lambda path: "") is None


def test_every_library_the_readme_installs_is_mapped() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    line = next(text for text in readme.splitlines() if "apt-get install" in text)
    named = set(line.split("apt-get install", 1)[1].split())
    xcb_packages = {p for lib, p in LIBRARY_PACKAGES.items() if lib.startswith("libxcb")}
    assert xcb_packages <= named
    assert {"libxkbcommon-x11-0", "libx11-xcb1", "libegl1", "libgl1"} <= named


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the check is for Linux")
def test_coco_says_there_is_no_display_instead_of_starting_qt(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    result = subprocess.run([sys.executable, "-m", "app", "--data-dir", str(tmp_path)],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=60,
                            check=False)
    assert result.returncode == 1
    assert "there is no display" in result.stderr
    assert "Reinstalling the application" not in result.stderr  # Qt never spoke
    assert not (tmp_path / "logs").exists()  # stopped before anything started
