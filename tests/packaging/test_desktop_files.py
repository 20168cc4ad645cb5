"""The freedesktop .desktop entry and the AppStream metainfo: well-formed, consistent with each
other and with the app (id, version). The distributions' validators run when installed."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from app import __version__
from app.appinfo import APP_ID, APP_NAME, SUMMARY

LINUX = Path(__file__).resolve().parents[2] / "packaging" / "linux"
DESKTOP = LINUX / f"{APP_ID}.desktop"
METAINFO = LINUX / f"{APP_ID}.metainfo.xml"


def desktop_entry() -> dict[str, str]:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read(DESKTOP, encoding="utf-8")
    return dict(parser["Desktop Entry"])


def test_desktop_entry_has_what_menus_need() -> None:
    entry = desktop_entry()
    assert entry["Type"] == "Application"
    assert entry["Name"] == APP_NAME
    assert entry["Comment"] == SUMMARY
    assert entry["Exec"].split()[0] == "coco"
    assert entry["Icon"] == APP_ID  # themed icon name, installed as hicolor/NxN/apps/APP_ID.png
    assert entry["Terminal"] == "false"
    for key in ("Categories", "Keywords"):
        assert entry[key].endswith(";")
    assert entry["Categories"].split(";")[0] in {
        "AudioVideo", "Audio", "Video", "Development", "Education", "Game", "Graphics",
        "Network", "Office", "Science", "Settings", "System", "Utility",
    }


def test_metainfo_matches_the_desktop_entry_and_the_version() -> None:
    root = ET.parse(METAINFO).getroot()
    assert root.tag == "component" and root.get("type") == "desktop-application"
    assert root.findtext("id") == APP_ID
    assert root.findtext("name") == APP_NAME
    assert root.findtext("summary") == SUMMARY
    assert root.findtext("metadata_license") == "CC0-1.0"
    assert root.findtext("project_license") == "MIT"
    launchable = root.find("launchable")
    assert launchable is not None and launchable.get("type") == "desktop-id"
    assert launchable.text == DESKTOP.name
    assert root.findtext("provides/binary") == "coco"
    releases = root.findall("releases/release")
    assert releases and releases[0].get("version") == __version__  # newest release first
    assert root.find("description/p") is not None


def test_desktop_file_validate_accepts_it() -> None:
    tool = shutil.which("desktop-file-validate")
    if tool is None:
        pytest.skip("desktop-file-validate (desktop-file-utils) is not installed")
    result = subprocess.run(
        [tool, str(DESKTOP)], check=False, capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "error" not in result.stdout.lower()


def test_appstreamcli_validates_the_metainfo() -> None:
    tool = shutil.which("appstreamcli")
    if tool is None:
        pytest.skip("appstreamcli (appstream) is not installed")
    result = subprocess.run(
        [tool, "validate", "--no-net", str(METAINFO)], check=False, capture_output=True,
        text=True, timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr

