"""Colours derived from the application palette, so light and dark follow the system.

Nothing here hard-codes a light or dark scheme: every colour starts from a palette role and is
mixed towards the window or text colour, so it reads on whatever the platform theme gives.
"""

from __future__ import annotations

from typing import NamedTuple

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


class Colors(NamedTuple):
    """The handful of colours the window uses, as ``#rrggbb`` strings for style sheets.
    (A named tuple rather than a frozen dataclass: made before the window's first paint, where
    a dataclass costs compiling its methods.)"""

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


# The colours last derived, by the cache key of the palette they came from: a row's widget
# asks for them two or three times as it is built (18 colour mixes, 26 us each time), and the
# palette changes only with the theme. Qt gives a palette a new key whenever its contents change.
_last_colors: tuple[int, Colors] | None = None


def colors(palette: QPalette | None = None) -> Colors:
    """The current colours, derived from ``palette`` (default: the application palette)."""
    global _last_colors
    pal = palette or QGuiApplication.palette()
    key = pal.cacheKey()
    last = _last_colors
    if last is not None and last[0] == key:
        return last[1]
    derived = _derive(pal)
    _last_colors = (key, derived)
    return derived


def _derive(pal: QPalette) -> Colors:
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


THEMES = ("system", "light", "dark")
_system_palette: QPalette | None = None


def _palette(dark: bool) -> QPalette:
    """A complete light or dark palette (Qt's Fusion colours, so every style reads it)."""
    pal = QPalette()
    roles = QPalette.ColorRole
    if dark:
        scheme = {
            roles.Window: "#202124", roles.WindowText: "#e8eaed", roles.Base: "#17181a",
            roles.AlternateBase: "#24262a", roles.Text: "#e8eaed", roles.Button: "#2b2d31",
            roles.ButtonText: "#e8eaed", roles.Highlight: "#4c8dff",
            roles.HighlightedText: "#ffffff", roles.ToolTipBase: "#2b2d31",
            roles.ToolTipText: "#e8eaed", roles.PlaceholderText: "#9aa0a6",
            roles.Link: "#8ab4f8", roles.Mid: "#3c4043", roles.Dark: "#101113",
        }
    else:
        scheme = {
            roles.Window: "#f6f7f9", roles.WindowText: "#1f2328", roles.Base: "#ffffff",
            roles.AlternateBase: "#f2f4f7", roles.Text: "#1f2328", roles.Button: "#f0f2f5",
            roles.ButtonText: "#1f2328", roles.Highlight: "#2f6fde",
            roles.HighlightedText: "#ffffff", roles.ToolTipBase: "#ffffff",
            roles.ToolTipText: "#1f2328", roles.PlaceholderText: "#6e7781",
            roles.Link: "#0969da", roles.Mid: "#d0d7de", roles.Dark: "#8c959f",
        }
    for role, value in scheme.items():
        pal.setColor(role, QColor(value))
    # Disabled controls read as disabled (setColor set every group to the active colours):
    # an idle Stop must not look ready to click.
    disabled = QColor("#6b7075" if dark else "#a3aab3")
    for role in (roles.WindowText, roles.Text, roles.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, disabled)
    return pal


def apply_theme(theme: str) -> None:
    """Light, dark, or the system's own colours, at once: every colour of the window and the
    code highlighting is derived from the palette, and the widgets redraw on its change."""
    global _system_palette
    app = QGuiApplication.instance()
    if not isinstance(app, QGuiApplication):
        return
    if _system_palette is None:
        # A copy (returned by value). Not QPalette(palette): choosing among QPalette's
        # constructors builds Qt's namespace enums (one takes a Qt.GlobalColor), 14 ms before
        # the window's first paint (see qt_namespace).
        _system_palette = QGuiApplication.palette()
    if theme == "dark":
        QGuiApplication.setPalette(_palette(dark=True))
    elif theme == "light":
        QGuiApplication.setPalette(_palette(dark=False))
    else:
        QGuiApplication.setPalette(_system_palette)


def pygments_style_name(palette: QPalette | None = None) -> str:
    """A pygments style that reads on the current background."""
    return "monokai" if is_dark(palette) else "default"
