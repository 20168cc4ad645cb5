"""Colours derived from the application palette, so light and dark follow the system.

Nothing here hard-codes a light or dark scheme: every colour starts from a palette role and is
mixed towards the window or text colour, so it reads on whatever the platform theme gives.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QColor, QGuiApplication, QPalette


def mix(a: QColor, b: QColor, t: float) -> QColor:
    """``a`` blended towards ``b`` by ``t`` (0 = a, 1 = b)."""
    t = max(0.0, min(1.0, t))
    return QColor.fromRgbF(
        a.redF() + (b.redF() - a.redF()) * t,
        a.greenF() + (b.greenF() - a.greenF()) * t,
        a.blueF() + (b.blueF() - a.blueF()) * t,
        1.0,
    )


def is_dark(palette: QPalette | None = None) -> bool:
    """True when the window background is darker than its text."""
    pal = palette or QGuiApplication.palette()
    return pal.color(QPalette.ColorRole.Window).lightnessF() < pal.color(
        QPalette.ColorRole.WindowText
    ).lightnessF()


@dataclass(frozen=True)
class Colors:
    """The handful of colours the window uses, as ``#rrggbb`` strings for style sheets."""

    text: str
    muted: str
    base: str
    window: str
    user_bubble: str
    code_bg: str
    border: str
    accent: str
    warning: str
    error: str
    ok: str
    summary_bg: str
    banner_bg: str
    dark: bool


def colors(palette: QPalette | None = None) -> Colors:
    """The current colours, derived from ``palette`` (default: the application palette)."""
    pal = palette or QGuiApplication.palette()
    dark = is_dark(pal)
    text = pal.color(QPalette.ColorRole.Text)
    base = pal.color(QPalette.ColorRole.Base)
    window = pal.color(QPalette.ColorRole.Window)
    accent = pal.color(QPalette.ColorRole.Highlight)
    # Status hues are fixed in hue but lifted in dark mode so they stay legible.
    warning = QColor("#f0b429") if dark else QColor("#9a6700")
    error = QColor("#ff7b72") if dark else QColor("#cf222e")
    ok = QColor("#56d364") if dark else QColor("#1a7f37")
    return Colors(
        text=text.name(),
        muted=mix(text, base, 0.45).name(),
        base=base.name(),
        window=window.name(),
        user_bubble=mix(base, accent, 0.12 if dark else 0.08).name(),
        code_bg=mix(base, text, 0.08 if dark else 0.05).name(),
        border=mix(base, text, 0.2).name(),
        accent=accent.name(),
        warning=warning.name(),
        error=error.name(),
        ok=ok.name(),
        summary_bg=mix(base, warning, 0.14).name(),
        banner_bg=mix(window, accent, 0.18).name(),
        dark=dark,
    )


def pygments_style_name(palette: QPalette | None = None) -> str:
    """A pygments style that reads on the current background."""
    return "monokai" if is_dark(palette) else "default"
