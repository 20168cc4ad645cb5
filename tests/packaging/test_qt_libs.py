"""packaging/qt_libs.py: the build's check that Qt's X11/Wayland plugins have every library they
link, on the build machine and inside the bundle, fed plugins' dependency lists (``ldd`` output).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


def load_qt_libs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("qt_libs", REPO / "packaging" / "qt_libs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["qt_libs"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


qt_libs = load_qt_libs()

# ldd's output for libqxcb.so on a machine without libxcb-icccm4 and libxcb-keysyms1 (issue 27).
XCB_LDD_MISSING = """\
\tlinux-vdso.so.1 (0x00007ffc8a5f2000)
\tlibQt6XcbQpa.so.6 => /venv/PySide6/Qt/plugins/platforms/../../lib/libQt6XcbQpa.so.6 (0x7f)
\tlibGL.so.1 => /lib/x86_64-linux-gnu/libGL.so.1 (0x00007f342b577000)
\tlibxkbcommon-x11.so.0 => /lib/x86_64-linux-gnu/libxkbcommon-x11.so.0 (0x00007f342b524000)
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibxcb.so.1 => /lib/x86_64-linux-gnu/libxcb.so.1 (0x00007f342a977000)
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f342981e000)
\t/lib64/ld-linux-x86-64.so.2 (0x00007f342b6d8000)
"""
WAYLAND_LDD_MISSING = """\
\tlibwayland-cursor.so.0 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibexotic.so.3 => not found
"""


def test_ldd_output_is_parsed_into_names_and_places() -> None:
    libraries = qt_libs.parse_ldd(XCB_LDD_MISSING)
    assert [lib.name for lib in libraries] == [
        "libQt6XcbQpa.so.6", "libGL.so.1", "libxkbcommon-x11.so.0", "libxcb-icccm.so.4",
        "libxcb-keysyms.so.1", "libxcb.so.1", "libc.so.6",
    ]
    assert libraries[1].path == "/lib/x86_64-linux-gnu/libGL.so.1"
    assert libraries[3].path is None


def test_a_library_missing_on_the_build_machine_fails_naming_its_debian_package() -> None:
    problems = qt_libs.check_build_machine({
        "/venv/PySide6/Qt/plugins/platforms/libqxcb.so": XCB_LDD_MISSING,
        "/venv/PySide6/Qt/plugins/platforms/libqwayland.so": WAYLAND_LDD_MISSING,
    })
    assert len(problems) == 1
    text = problems[0]
    assert "libxcb-keysyms.so.1 (needed by libqxcb.so, libqwayland.so)" in text
    assert "libxcb-icccm.so.4 (needed by libqxcb.so)" in text
    assert ("sudo apt-get install libxcb-icccm4 libxcb-keysyms1 libwayland-cursor0" in text)
    assert "libexotic.so.3 (apt-file search)" in text  # not in the table: said so, not dropped


def test_a_build_machine_with_every_library_passes() -> None:
    complete = XCB_LDD_MISSING.replace("=> not found", "=> /lib/x86_64-linux-gnu/x.so (0x1)")
    assert qt_libs.check_build_machine({"libqxcb.so": complete}) == []


def test_the_bundle_must_hold_what_pyinstaller_left_out(tmp_path: Path) -> None:
    bundle = tmp_path / "dist" / "coco"
    internal = bundle / "_internal"
    ldd = f"""\
\tlibQt6XcbQpa.so.6 => {internal}/PySide6/Qt/lib/libQt6XcbQpa.so.6 (0x1)
\tlibxcb-icccm.so.4 => {internal}/libxcb-icccm.so.4 (0x2)
\tlibxcb-keysyms.so.1 => /lib/x86_64-linux-gnu/libxcb-keysyms.so.1 (0x3)
\tlibxcb-cursor.so.0 => not found
\tlibxcb.so.1 => /lib/x86_64-linux-gnu/libxcb.so.1 (0x4)
\tlibGL.so.1 => /lib/x86_64-linux-gnu/libGL.so.1 (0x5)
"""
    system_libraries = {"libxcb.so.1", "libGL.so.1"}  # PyInstaller's exclude list, say
    problems, system = qt_libs.check_bundle(
        {str(internal / "PySide6/Qt/plugins/platforms/libqxcb.so"): ldd}, bundle,
        system_libraries.__contains__,
    )
    assert system == ["libxcb.so.1", "libGL.so.1"]  # the target's own, reported as such
    assert len(problems) == 2
    not_found, outside = problems
    assert "libxcb-cursor.so.0" in not_found and "sudo apt-get install libxcb-cursor0" in not_found
    assert "libxcb-keysyms.so.1" in outside and "Debian packages: libxcb-keysyms1" in outside
    assert "libxcb-icccm" not in " ".join(problems)  # inside the bundle: fine


def test_a_complete_bundle_passes(tmp_path: Path) -> None:
    bundle = tmp_path / "coco"
    ldd = f"\tlibxcb-icccm.so.4 => {bundle}/_internal/libxcb-icccm.so.4 (0x2)\n"
    assert qt_libs.check_bundle({"libqxcb.so": ldd}, bundle, lambda name: False) == ([], [])


def test_the_plugins_checked_are_where_pyside6_keeps_them() -> None:
    pyside6 = pytest.importorskip("PySide6")
    plugins = qt_libs.plugin_files(Path(pyside6.__file__).parent / "Qt" / "plugins")
    names = {p.name for p in plugins}
    assert "libqxcb.so" in names
    assert any(name.startswith("libqwayland") for name in names)
    assert "libxdg-shell.so" in names  # Wayland windows need the xdg-shell integration
