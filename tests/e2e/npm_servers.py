"""The npm reference MCP servers the e2e tests run, pinned, installed once into a cache folder
(``npm install`` of a package.json written there) and started with ``npx --offline`` from it,
so no test run reaches the registry. ``python -m tests.e2e.npm_servers`` installs them (CI does,
before the tests); a test that finds them missing installs them the same way. Only a machine
without Node skips those tests."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

PACKAGES = {
    "@modelcontextprotocol/server-everything": "2026.8.31",
    "@modelcontextprotocol/server-filesystem": "2026.8.31",
}
INSTALL_TIMEOUT = 600.0


def node_missing() -> str | None:
    """Why the npm servers cannot run here, or None when node, npm and npx are all present."""
    absent = [tool for tool in ("node", "npm", "npx") if shutil.which(tool) is None]
    return f"Node is not installed ({', '.join(absent)} not found)" if absent else None


def cache_dir() -> Path:
    """The folder the pinned packages are installed in (``COCO_TEST_NPM_DIR`` overrides it)."""
    override = os.environ.get("COCO_TEST_NPM_DIR")
    if override:
        return Path(override)
    pins = hashlib.sha1(json.dumps(PACKAGES, sort_keys=True).encode()).hexdigest()[:10]
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "coco-tests" / f"npm-mcp-{pins}"


def _installed(folder: Path) -> bool:
    for name, version in PACKAGES.items():
        manifest = folder / "node_modules" / name / "package.json"
        try:
            if json.loads(manifest.read_text())["version"] != version:
                return False
        except (OSError, ValueError, KeyError):
            return False
    return True


def ensure_installed() -> Path:
    """The cache folder, the pinned packages installed in it (once; a lock keeps two test
    processes from installing at the same time). Raises RuntimeError when npm fails."""
    folder = cache_dir()
    if _installed(folder):
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".install-lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _installed(folder):
            return folder
        manifest = {"name": "coco-test-mcp-servers", "private": True, "dependencies": PACKAGES}
        (folder / "package.json").write_text(json.dumps(manifest, indent=2))
        done = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=folder, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False,
        )
        if done.returncode != 0 or not _installed(folder):
            raise RuntimeError(
                f"npm install of {', '.join(PACKAGES)} failed in {folder}:\n{done.stderr[-2000:]}"
            )
    return folder


def entry(package: str, *args: str, **extra: Any) -> dict[str, Any]:
    """An ``mcpServers`` entry that runs ``package`` at its pinned version through npx, from the
    cache folder and offline (as a person's ``npx -y package@version`` would, minus the fetch)."""
    folder = ensure_installed()
    return {
        "command": "npx",
        "args": ["--offline", "--no-install", f"{package}@{PACKAGES[package]}", *args],
        "cwd": str(folder),
        **extra,
    }


if __name__ == "__main__":
    reason = node_missing()
    if reason is not None:
        print(f"npm MCP servers not installed: {reason}", file=sys.stderr)
        sys.exit(0)
    print(f"npm MCP servers ready in {ensure_installed()}")
