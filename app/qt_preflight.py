"""Before Qt starts on Linux: can its display plugin load, and is there a display at all?

When a system library that Qt's xcb (X11) platform plugin links is missing, Qt aborts (exit
134) with a line that names ``libxcb-cursor0`` whatever the missing library really is; without a
display it says "could not connect to display" and suggests reinstalling. This check runs first
and says what is actually wrong, in words, with the ``apt-get install`` line that fixes it:

- no display: neither ``DISPLAY`` (X11) nor ``WAYLAND_DISPLAY`` (Wayland) is set;
- missing libraries: the platform plugin Qt would use cannot be loaded; every library it lacks
  is named (``ldd`` lists them all), with its Debian/Ubuntu package;
- an X display that is set but cannot be reached.

It costs about a millisecond when all is well: the plugin is loaded (Qt loads the same file a
moment later) and ``ldd`` runs only when that failed. Only the platforms that need a desktop
(``xcb``, ``wayland``) are checked; ``offscreen`` and the others are left to Qt. The checks take
their environment, loader, ``ldd`` and display probe as arguments, so tests need no display.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

# The libraries Qt's xcb and wayland plugins (and the Qt libraries they pull in) link, with the
# Debian/Ubuntu package that ships each one (found with ``dpkg -S`` on Debian 12). The README's
# ``apt-get install`` line names the same packages.
LIBRARY_PACKAGES: dict[str, str] = {
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libGLX.so.0": "libglx0",
    "libGLdispatch.so.0": "libglvnd0",
    "libOpenGL.so.0": "libopengl0",
    "libX11.so.6": "libx11-6",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libdbus-1.so.3": "libdbus-1-3",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
    "libwayland-client.so.0": "libwayland-client0",
    "libwayland-cursor.so.0": "libwayland-cursor0",
    "libwayland-egl.so.1": "libwayland-egl1",
    "libxcb.so.1": "libxcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-glx.so.0": "libxcb-glx0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
}

# The platforms that need a desktop session, and the variable that names it.
DISPLAY_VARIABLES = {"xcb": "DISPLAY", "wayland": "WAYLAND_DISPLAY"}
_PLATFORM_WORDS = {"xcb": "X11", "wayland": "Wayland"}

_NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found\s*$", re.MULTILINE)
_DLOPEN_MISSING = re.compile(r"(\S+?\.so[.\d]*): cannot open shared object file")

Loader = Callable[[str], None]
"""Loads the shared library at a path; raises OSError (with the loader's message) if it cannot."""
Ldd = Callable[[str], str]
"""``ldd``'s output for a path ("" when ldd cannot run)."""
DisplayProbe = Callable[[str], bool]
"""Whether the X display named by the argument accepts a connection."""


class PreflightProblem(NamedTuple):
    """Why Qt cannot start here, in words. (A named tuple: this module is loaded at every
    launch, where a frozen dataclass costs compiling its methods.)"""

    kind: str  # "no-display", "missing-libraries" or "display-unreachable"
    message: str
    missing: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()


def candidate_platforms(env: Mapping[str, str]) -> list[str]:
    """The platform plugins Qt may use, in order.

    ``QT_QPA_PLATFORM`` when set (a ``;`` list, options after ``:`` dropped). Otherwise X11 and
    Wayland, Wayland first in a Wayland session: the check passes when either can start, so it
    never stops a start that Qt might manage.
    """
    value = env.get("QT_QPA_PLATFORM", "").strip()
    if value:
        return [p.split(":", 1)[0].strip().lower() for p in value.split(";") if p.strip()]
    if env.get("XDG_SESSION_TYPE", "").lower() == "wayland":
        return ["wayland", "xcb"]
    return ["xcb", "wayland"]


def missing_libraries(ldd_output: str) -> list[str]:
    """The libraries ``ldd`` reports as "not found", each once, in order."""
    seen: dict[str, None] = {}
    for name in _NOT_FOUND.findall(ldd_output):
        seen.setdefault(name, None)
    return list(seen)


def packages_for(libraries: Sequence[str]) -> list[str]:
    """The Debian/Ubuntu packages that ship ``libraries`` (unknown ones are left out)."""
    seen: dict[str, None] = {}
    for library in libraries:
        package = LIBRARY_PACKAGES.get(library)
        if package:
            seen.setdefault(package, None)
    return list(seen)


def plugin_directory() -> Path | None:
    """Where Qt looks for platform plugins: ``QT_QPA_PLATFORM_PLUGIN_PATH`` or PySide6's own
    ``Qt/plugins/platforms`` (found without importing Qt); None when neither is there."""
    override = os.environ.get("QT_QPA_PLATFORM_PLUGIN_PATH")
    if override:
        return Path(override)
    try:
        spec = importlib.util.find_spec("PySide6")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        platforms = Path(location) / "Qt" / "plugins" / "platforms"
        if platforms.is_dir():
            return platforms
    return None


def load_library(path: str) -> None:
    """Load a shared library into this process (Qt loads the same file right after)."""
    import ctypes  # here, not at import: start-up runs this module on every platform

    ctypes.CDLL(path)


def run_ldd(path: str) -> str:
    """``ldd path``'s output; "" when ldd is not there or fails to run."""
    import subprocess

    try:
        result = subprocess.run(["ldd", path], capture_output=True, text=True, timeout=10,
                                check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return result.stdout


def x_display_reachable(display: str) -> bool:
    """Whether libxcb can connect to the X display ``display`` (as Qt's xcb plugin will)."""
    import ctypes

    try:
        xcb = ctypes.CDLL("libxcb.so.1")
    except OSError:
        return True  # cannot tell: the missing library is reported elsewhere, or Qt says it
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    xcb.xcb_connection_has_error.restype = ctypes.c_int
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.restype = None
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    connection = xcb.xcb_connect(display.encode(), None)
    try:
        return bool(connection) and xcb.xcb_connection_has_error(connection) == 0
    finally:
        if connection:
            xcb.xcb_disconnect(connection)  # frees the error connection too


def _plugin_file(directory: Path, platform: str) -> Path:
    return directory / f"libq{platform}.so"


def _missing_for(plugin: Path, load: Loader, ldd: Ldd) -> list[str] | None:
    """None when ``plugin`` loads; else the libraries it lacks (empty: a failure of another
    kind, which is left to Qt to report)."""
    try:
        load(str(plugin))
    except OSError as exc:
        missing = missing_libraries(ldd(str(plugin)))
        if not missing:
            named = _DLOPEN_MISSING.search(str(exc))
            missing = [named.group(1)] if named else []
        return missing
    return None


def check(
    env: Mapping[str, str] | None = None,
    *,
    platform: str = sys.platform,
    plugin_dir: Path | None = None,
    load: Loader = load_library,
    ldd: Ldd = run_ldd,
    display_reachable: DisplayProbe = x_display_reachable,
) -> PreflightProblem | None:
    """What stops Qt from starting here, or None (nothing found, or nothing this can check)."""
    if not platform.startswith("linux"):
        return None
    env = os.environ if env is None else env
    candidates = candidate_platforms(env)
    desktop = [p for p in candidates if p in DISPLAY_VARIABLES]
    if not desktop or len(desktop) < len(candidates):
        return None  # offscreen, vnc, eglfs… (or a list that has one): Qt's own business
    with_display = [p for p in desktop if env.get(DISPLAY_VARIABLES[p])]
    if not with_display:
        return _no_display(desktop, env.get("QT_QPA_PLATFORM", "").strip())
    directory = plugin_dir if plugin_dir is not None else plugin_directory()
    if directory is None:
        return None
    failures: list[tuple[str, list[str]]] = []
    unreachable: str | None = None
    for name in with_display:
        plugin = _plugin_file(directory, name)
        if not plugin.is_file():
            return None  # a layout this check does not know: let Qt look for itself
        missing = _missing_for(plugin, load, ldd)
        if missing is None:
            if name != "xcb" or display_reachable(env["DISPLAY"]):
                return None
            unreachable = env["DISPLAY"]
            continue
        if not missing:
            return None
        failures.append((name, missing))
    if not failures:
        assert unreachable is not None
        return _unreachable(unreachable)
    problem = _missing_problem(failures)
    if unreachable is None:
        return problem
    return PreflightProblem(problem.kind, f"{problem.message}\n{_unreachable(unreachable).message}",
                            problem.missing, problem.packages)


def _no_display(platforms: Sequence[str], requested: str) -> PreflightProblem:
    unset = [f"{DISPLAY_VARIABLES[p]} ({_PLATFORM_WORDS[p]})" for p in platforms]
    what = f"{unset[0]} is not set" if len(unset) == 1 else f"neither {' nor '.join(unset)} is set"
    asked = f"; QT_QPA_PLATFORM is {requested}" if requested else ""
    message = (
        f"Coco cannot start: there is no display to open its window on ({what}{asked}).\n"
        "Start Coco from a desktop session. To run it without one, use the headless platform "
        "(QT_QPA_PLATFORM=offscreen coco --self-test) or a virtual display (xvfb-run coco)."
    )
    return PreflightProblem("no-display", message)


def _missing_problem(failures: Sequence[tuple[str, list[str]]]) -> PreflightProblem:
    lines: list[str] = []
    all_missing: list[str] = []
    for name, missing in failures:
        word = _PLATFORM_WORDS.get(name, name)
        lines.append(
            f"Qt's {word} platform plugin ({name}) cannot load: these system libraries are "
            f"missing: {', '.join(missing)}."
        )
        all_missing += [m for m in missing if m not in all_missing]
    packages = packages_for(all_missing)
    unknown = [m for m in all_missing if m not in LIBRARY_PACKAGES]
    text = ["Coco cannot start its window.", *lines]
    if packages:
        text.append("On Debian or Ubuntu, install them with:\n"
                    f"    sudo apt-get install {' '.join(packages)}")
    if unknown:
        text.append(f"Install the packages that provide {', '.join(unknown)} with your "
                    "system's package manager.")
    return PreflightProblem("missing-libraries", "\n".join(text), tuple(all_missing),
                            tuple(packages))


def _unreachable(display: str) -> PreflightProblem:
    return PreflightProblem(
        "display-unreachable",
        f"Coco cannot start: it cannot connect to the X display {display!r} (DISPLAY). The X "
        "server there may have stopped, or this user may not be allowed to use it (check "
        "XAUTHORITY, or run Coco from the desktop session itself).",
    )
