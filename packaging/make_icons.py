"""Render Coco's one SVG icon into everything the platforms ask for.

    python packaging/make_icons.py [--svg resources/icons/coco.svg] [--out build/icons]

Writes ``coco-<N>.png`` for N in 16, 24, 32, 48, 64, 128, 256, 512 (Linux hicolor sizes),
``coco.ico`` (Windows: 16–256, PNG-compressed entries) and ``coco.icns`` (macOS: 16–1024,
PNG entries). Rendering uses Qt's SVG renderer on the offscreen platform, so it runs headless;
the .ico and .icns containers are written directly (both are a small header and the PNGs).
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SVG = REPO / "resources" / "icons" / "coco.svg"
DEFAULT_OUT = REPO / "build" / "icons"

PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# ICNS element types holding PNG data, and the pixel size each one holds.
ICNS_TYPES: tuple[tuple[bytes, int], ...] = (
    (b"icp4", 16),
    (b"icp5", 32),
    (b"icp6", 64),
    (b"ic07", 128),
    (b"ic08", 256),
    (b"ic09", 512),
    (b"ic10", 1024),  # 512x512@2x
    (b"ic11", 32),  # 16x16@2x
    (b"ic12", 64),  # 32x32@2x
    (b"ic13", 256),  # 128x128@2x
    (b"ic14", 512),  # 256x256@2x
)


def render_pngs(svg: Path, sizes: set[int]) -> dict[int, bytes]:
    """PNG bytes of ``svg`` rendered square at each size (transparent background)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRectF, Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication(["make_icons"])
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise ValueError(f"{svg} is not a valid SVG")
    out: dict[int, bytes] = {}
    for size in sorted(sizes):
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        renderer.render(painter, QRectF(0, 0, size, size))
        painter.end()
        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        # The stubs ask for bytes, but only a str format works at run time.
        saved = image.save(buffer, "PNG")  # type: ignore[call-overload]
        if not saved:
            raise RuntimeError(f"could not encode the {size}px PNG")
        buffer.close()
        out[size] = bytes(data.data())
    del app  # keep the application alive until every image is rendered
    return out


def ico_bytes(pngs: dict[int, bytes]) -> bytes:
    """A Windows .ico holding the given PNGs (Vista and later read PNG entries)."""
    sizes = sorted(pngs)
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = len(header) + 16 * len(sizes)
    entries = b""
    for size in sizes:
        data = pngs[size]
        dim = 0 if size >= 256 else size  # 0 means 256 in the directory entry
        entries += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(data), offset)
        offset += len(data)
    return header + entries + b"".join(pngs[s] for s in sizes)


def icns_bytes(pngs: dict[int, bytes]) -> bytes:
    """A macOS .icns with one PNG element per type in ``ICNS_TYPES``."""
    body = b"".join(
        kind + struct.pack(">I", 8 + len(pngs[size])) + pngs[size] for kind, size in ICNS_TYPES
    )
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def make_icons(svg: Path = DEFAULT_SVG, out_dir: Path = DEFAULT_OUT) -> dict[str, Path]:
    """Write the PNGs, the .ico and the .icns into ``out_dir``; their paths by name."""
    needed = set(PNG_SIZES) | set(ICO_SIZES) | {size for _kind, size in ICNS_TYPES}
    pngs = render_pngs(svg, needed)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for size in PNG_SIZES:
        path = out_dir / f"coco-{size}.png"
        path.write_bytes(pngs[size])
        written[path.name] = path
    ico = out_dir / "coco.ico"
    ico.write_bytes(ico_bytes({s: pngs[s] for s in ICO_SIZES}))
    written[ico.name] = ico
    icns = out_dir / "coco.icns"
    icns.write_bytes(icns_bytes(pngs))
    written[icns.name] = icns
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Render Coco's icons from its SVG.")
    parser.add_argument("--svg", type=Path, default=DEFAULT_SVG, help="source SVG")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    args = parser.parse_args(argv)
    try:
        written = make_icons(args.svg, args.out)
    except (OSError, ValueError, RuntimeError) as exc:
        print(f"make_icons: {exc}", file=sys.stderr)
        return 1
    print(f"Wrote {len(written)} icon files to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
