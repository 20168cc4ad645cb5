"""Check that Qt's desktop platform plugins (X11 and Wayland) have every library they link.

PyInstaller only warns when it cannot resolve a plugin's library ("could not resolve
libxcb-keysyms.so.1, dependency of libqxcb.so") and builds a bundle that then cannot open its
window on machines without it. ``packaging/build-linux.sh`` runs this twice:

    python packaging/qt_libs.py build-machine     before building: on this machine
    python packaging/qt_libs.py bundle dist/coco  after building: inside the bundle

``build-machine`` fails when ``ldd`` reports a library of the plugins as "not found" and names the
Debian packages to install (the table of :mod:`app.qt_preflight`, the one the app itself uses).
``bundle`` fails when a library the bundled plugins link resolves neither inside the bundle nor to
one of the system libraries PyInstaller leaves out on purpose (glibc, the GL/EGL driver stack,
libxcb, libwayland-*: they must match the target's drivers and display server); it then prints the
packages the target system needs for those.

Exit status: 0 when all is well, 1 when a library is missing.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from app.qt_preflight import LIBRARY_PACKAGES, packages_for

# The plugins Qt loads to put a window on an X11 or Wayland desktop (relative to Qt/plugins).
DESKTOP_PLUGINS = (
    "platforms/libqxcb.so",
    "platforms/libqwayland*.so",
    "xcbglintegrations/*.so",
    "wayland-shell-integration/*.so",
    "wayland-graphics-integration-client/*.so",
    "wayland-decoration-client/*.so",
)

_LDD_LINE = re.compile(r"^\s*(\S+)\s+=>\s+(.*?)\s*(?:\(0x[0-9a-f]+\))?\s*$")


@dataclass(frozen=True)
class Library:
    """One library ``ldd`` lists: its name and where it resolved (None: not found)."""

    name: str
    path: str | None


def parse_ldd(output: str) -> list[Library]:
    """The libraries in ``ldd`` output, in order (the vdso and the loader left out)."""
    libraries: list[Library] = []
    for line in output.splitlines():
        match = _LDD_LINE.match(line)
        if not match:
            continue  # "linux-vdso.so.1 (0x…)", "/lib64/ld-linux-x86-64.so.2 (0x…)"
        name, where = match.groups()
        libraries.append(Library(name, None if where == "not found" else where))
    return libraries


def install_hint(missing: Iterable[str]) -> str:
    """How to get ``missing`` libraries on Debian/Ubuntu, in words."""
    missing = list(dict.fromkeys(missing))
    packages = packages_for(missing)
    unknown = [m for m in missing if m not in LIBRARY_PACKAGES]
    hints = []
    if packages:
        hints.append(f"install them with: sudo apt-get install {' '.join(packages)}")
    if unknown:
        hints.append(f"find the packages that provide {', '.join(unknown)} (apt-file search)")
    return "; ".join(hints)


def check_build_machine(ldd_outputs: Mapping[str, str]) -> list[str]:
    """Problems with the plugins on the build machine: the libraries ``ldd`` cannot find.

    ``ldd_outputs`` maps each plugin (a path or name) to its ``ldd`` output."""
    missing: dict[str, list[str]] = {}
    for plugin, output in ldd_outputs.items():
        for library in parse_ldd(output):
            if library.path is None:
                missing.setdefault(library.name, []).append(Path(plugin).name)
    if not missing:
        return []
    lines = [f"{name} (needed by {', '.join(dict.fromkeys(users))})"
             for name, users in missing.items()]
    return [
        "The build machine lacks libraries Qt's X11/Wayland plugins link, so the bundle would "
        "be built without them:\n    " + "\n    ".join(lines) + "\n" + install_hint(missing)
    ]


def check_bundle(
    ldd_outputs: Mapping[str, str], bundle: Path, is_system_library: Callable[[str], bool]
) -> tuple[list[str], list[str]]:
    """``(problems, system libraries)`` for the plugins inside ``bundle``.

    A library is fine when it resolves inside ``bundle`` or is a system library left out on
    purpose (``is_system_library``: PyInstaller's exclude list); those are returned, for the
    target's requirements. Anything else is a problem: not found at all, or found only on this
    machine (PyInstaller did not bundle it)."""
    root = os.path.realpath(bundle)
    not_found: dict[str, None] = {}
    outside: dict[str, str] = {}
    system: dict[str, None] = {}
    for output in ldd_outputs.values():
        for library in parse_ldd(output):
            if is_system_library(library.name):
                system.setdefault(library.name, None)
            elif library.path is None:
                not_found.setdefault(library.name, None)
            elif not os.path.realpath(library.path).startswith(root + os.sep):
                outside.setdefault(library.name, library.path)
    problems = []
    if not_found:
        problems.append(
            f"The bundle lacks {', '.join(not_found)}, which Qt's X11/Wayland plugins link, "
            "and this machine has none either: " + install_hint(not_found) + ", then rebuild."
        )
    if outside:
        found = ", ".join(f"{name} ({path})" for name, path in outside.items())
        problems.append(
            f"The bundle lacks {', '.join(outside)}, which Qt's X11/Wayland plugins link: "
            f"PyInstaller left them out although this machine has them ({found}). On the users' "
            "machines that lack them the window cannot open"
            + (f" (Debian packages: {' '.join(packages_for(outside))})." if packages_for(outside)
               else ".")
        )
    return problems, list(system)


def only_needed_by(dropped: Path, binaries: Iterable[Path]) -> set[str]:
    """The libraries ``dropped`` pulls in (directly or not) that no other binary of
    ``binaries`` outside that set links: what can leave the bundle with ``dropped``."""
    from concurrent.futures import ThreadPoolExecutor

    pulled = {library.name for library in parse_ldd(run_ldd(dropped))}
    others = [b for b in binaries if b != dropped and b.name not in pulled]
    kept = {other.name for other in others}
    with ThreadPoolExecutor(max_workers=4) as pool:  # ldd is a process: threads overlap them
        for output in pool.map(run_ldd, others):
            kept.update(library.name for library in parse_ldd(output))
    return pulled - kept


def plugin_files(plugins_dir: Path) -> list[Path]:
    """The desktop platform plugins under a Qt ``plugins`` folder."""
    found: list[Path] = []
    for pattern in DESKTOP_PLUGINS:
        found += sorted(plugins_dir.glob(pattern))
    return found


def run_ldd(path: Path, env: Mapping[str, str] | None = None) -> str:
    result = subprocess.run(["ldd", str(path)], capture_output=True, text=True, check=False,
                            env=None if env is None else dict(env))
    return result.stdout


def _venv_plugins_dir() -> Path:
    import PySide6  # the build machine's Qt, the one PyInstaller collects

    return Path(PySide6.__file__).parent / "Qt" / "plugins"


def _is_system_library(name: str) -> bool:
    from PyInstaller.depend import dylib

    return not dylib.include_library(name)


def main(argv: list[str]) -> int:
    if argv[:1] == ["build-machine"] and len(argv) == 1:
        plugins = plugin_files(_venv_plugins_dir())
        if not plugins:
            print("qt_libs: no Qt platform plugins found in PySide6", file=sys.stderr)
            return 1
        problems = check_build_machine({str(p): run_ldd(p) for p in plugins})
        where = "on the build machine"
    elif argv[:1] == ["bundle"] and len(argv) == 2:
        bundle = Path(argv[1]).resolve()
        internal = bundle / "_internal"
        plugins = plugin_files(internal / "PySide6" / "Qt" / "plugins")
        if not plugins:
            print(f"qt_libs: the bundle {bundle} holds no Qt platform plugins", file=sys.stderr)
            return 1
        # The bundled executable puts _internal on the library path, as here.
        env = dict(os.environ, LD_LIBRARY_PATH=str(internal))
        problems, system = check_bundle(
            {str(p): run_ldd(p, env) for p in plugins}, bundle, _is_system_library
        )
        where = "in the bundle"
        if not problems:
            needs = packages_for(system)
            print(f"    target system needs (not bundled on purpose): {' '.join(needs)}")
    else:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    for problem in problems:
        print(f"FAIL  {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"    Qt's X11/Wayland plugins have all their libraries {where} ({len(plugins)} plugins)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
