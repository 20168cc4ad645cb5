"""make_icons.py renders the one SVG into every PNG size, a .ico and a .icns."""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from PySide6.QtGui import QImage

PACKAGING = Path(__file__).resolve().parents[2] / "packaging"


def load_make_icons() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_icons", PACKAGING / "make_icons.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.fixture(scope="module")
def icons(tmp_path_factory: pytest.TempPathFactory) -> tuple[ModuleType, dict[str, Path]]:
    module = load_make_icons()
    out = tmp_path_factory.mktemp("icons")
    return module, module.make_icons(module.DEFAULT_SVG, out)


def test_every_linux_size_is_rendered(qapp: Any, icons: tuple[ModuleType, dict[str, Path]]) -> None:
    module, written = icons
    assert module.PNG_SIZES == (16, 24, 32, 48, 64, 128, 256, 512)
    for size in module.PNG_SIZES:
        path = written[f"coco-{size}.png"]
        image = QImage(str(path))
        assert (image.width(), image.height()) == (size, size)
        assert image.hasAlphaChannel()
        # Not blank: the centre pixel is drawn, the corner is transparent.
        assert image.pixelColor(size // 2, size // 2).alpha() == 255
        assert image.pixelColor(0, 0).alpha() == 0


def test_ico_directory_lists_pngs_16_to_256(icons: tuple[ModuleType, dict[str, Path]]) -> None:
    _module, written = icons
    data = written["coco.ico"].read_bytes()
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    assert (reserved, kind) == (0, 1) and count == 7
    sizes = []
    for i in range(count):
        w, h, _c, _r, planes, bits, length, offset = struct.unpack(
            "<BBBBHHII", data[6 + 16 * i: 22 + 16 * i])
        real = png_size(data[offset: offset + length])
        assert real == (w or 256, h or 256)
        assert (planes, bits) == (1, 32)
        sizes.append(real[0])
    assert sizes == [16, 24, 32, 48, 64, 128, 256]


def test_icns_holds_png_elements_up_to_1024(icons: tuple[ModuleType, dict[str, Path]]) -> None:
    module, written = icons
    data = written["coco.icns"].read_bytes()
    assert data[:4] == b"icns"
    assert struct.unpack(">I", data[4:8])[0] == len(data)
    found: dict[bytes, tuple[int, int]] = {}
    pos = 8
    while pos < len(data):
        kind = data[pos: pos + 4]
        length = struct.unpack(">I", data[pos + 4: pos + 8])[0]
        found[kind] = png_size(data[pos + 8: pos + length])
        pos += length
    assert pos == len(data)
    assert found == {kind: (size, size) for kind, size in module.ICNS_TYPES}
    assert found[b"ic10"] == (1024, 1024)


def test_command_line_reports_a_bad_svg(tmp_path: Path, qapp: Any) -> None:
    module = load_make_icons()
    bad = tmp_path / "bad.svg"
    bad.write_text("not an svg")
    assert module.main(["--svg", str(bad), "--out", str(tmp_path / "out")]) == 1
