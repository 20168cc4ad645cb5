"""install.sh (shipped in the Linux bundle) installs the program, the menu entry, the icons and
the metainfo under a prefix, and --uninstall removes them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.appinfo import APP_ID

REPO = Path(__file__).resolve().parents[2]
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell script")


def fake_bundle(root: Path) -> Path:
    """The layout build-linux.sh produces, with a stand-in executable."""
    bundle = root / "coco"
    share = bundle / "share"
    (share / "applications").mkdir(parents=True)
    (share / "metainfo").mkdir()
    shutil.copy(REPO / "packaging" / "linux" / f"{APP_ID}.desktop", share / "applications")
    shutil.copy(REPO / "packaging" / "linux" / f"{APP_ID}.metainfo.xml", share / "metainfo")
    for size in SIZES:
        folder = share / "icons" / "hicolor" / f"{size}x{size}" / "apps"
        folder.mkdir(parents=True)
        (folder / f"{APP_ID}.png").write_bytes(b"png")
    scalable = share / "icons" / "hicolor" / "scalable" / "apps"
    scalable.mkdir(parents=True)
    shutil.copy(REPO / "resources" / "icons" / "coco.svg", scalable / f"{APP_ID}.svg")
    (bundle / "_internal").mkdir()
    exe = bundle / "coco"
    exe.write_text("#!/bin/sh\necho 'Coco 0.1.0'\n")
    exe.chmod(0o755)
    shutil.copy(REPO / "packaging" / "linux" / "install.sh", bundle / "install.sh")
    return bundle


def run_script(script: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": "/usr/bin:/bin"}
    return subprocess.run(["sh", str(script), *args], check=False, capture_output=True,
                          text=True, timeout=60, env=env)


def test_install_then_uninstall(tmp_path: Path) -> None:
    bundle = fake_bundle(tmp_path / "unpacked")
    prefix = tmp_path / "prefix"
    result = run_script(bundle / "install.sh", "--prefix", str(prefix))
    assert result.returncode == 0, result.stderr

    program = prefix / "lib" / "coco" / "coco"
    assert program.is_file() and os.access(program, os.X_OK)
    command = prefix / "bin" / "coco"
    assert command.is_symlink() and command.resolve() == program.resolve()
    ran = subprocess.run([str(command)], check=True, capture_output=True, text=True)
    assert ran.stdout == "Coco 0.1.0\n"
    desktop = prefix / "share" / "applications" / f"{APP_ID}.desktop"
    assert f'Exec="{program}"' in desktop.read_text()  # full path: ~/.local/bin may not be on PATH
    assert (prefix / "share" / "metainfo" / f"{APP_ID}.metainfo.xml").is_file()
    for size in SIZES:
        assert (prefix / "share" / "icons" / "hicolor" / f"{size}x{size}" / "apps"
                / f"{APP_ID}.png").is_file()

    result = run_script(prefix / "lib" / "coco" / "install.sh", "--uninstall", "--prefix",
                        str(prefix))
    assert result.returncode == 0, result.stderr
    assert not program.exists() and not command.exists() and not desktop.exists()
    assert not any((prefix / "share" / "icons").rglob("*.png"))
    # Nothing at all is left: no menu or icon cache the install (or the uninstall) refreshed.
    assert [p for p in prefix.rglob("*") if not p.is_dir()] == []


@pytest.mark.skipif(not (shutil.which("update-desktop-database")
                         and shutil.which("gtk-update-icon-cache")),
                    reason="the menu and icon cache tools are not installed")
def test_uninstall_keeps_the_caches_other_programs_need(tmp_path: Path) -> None:
    bundle = fake_bundle(tmp_path / "unpacked with space")
    prefix = tmp_path / "home with space" / ".local"
    other_desktop = prefix / "share" / "applications" / "other.desktop"
    other_desktop.parent.mkdir(parents=True)
    other_desktop.write_text("[Desktop Entry]\nType=Application\nName=Other\nExec=other\n"
                             "MimeType=text/x-other;\n")
    other_icon = prefix / "share" / "icons" / "hicolor" / "48x48" / "apps" / "other.png"
    other_icon.parent.mkdir(parents=True)
    shutil.copy(bundle / "share" / "icons" / "hicolor" / "48x48" / "apps" / f"{APP_ID}.png",
                other_icon)
    assert run_script(bundle / "install.sh", "--prefix", str(prefix)).returncode == 0
    result = run_script(prefix / "lib" / "coco" / "install.sh", "--uninstall", "--prefix",
                        str(prefix))
    assert result.returncode == 0, result.stderr
    assert other_desktop.is_file() and other_icon.is_file()
    assert "other.desktop" in (other_desktop.parent / "mimeinfo.cache").read_text()
    assert (prefix / "share" / "icons" / "hicolor" / "icon-theme.cache").is_file()
    assert not (other_desktop.parent / f"{APP_ID}.desktop").exists()


def test_refuses_to_run_outside_a_bundle(tmp_path: Path) -> None:
    lonely = tmp_path / "install.sh"
    shutil.copy(REPO / "packaging" / "linux" / "install.sh", lonely)
    result = run_script(lonely, "--prefix", str(tmp_path / "prefix"))
    assert result.returncode == 1
    assert "run me from the unpacked Coco bundle" in result.stderr
    assert not (tmp_path / "prefix").exists()
