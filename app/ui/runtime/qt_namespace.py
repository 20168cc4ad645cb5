"""Qt's namespace enums (``Qt.AlignmentFlag`` and the like), not built before the first paint.

The first time anything reads ``PySide6.QtCore.Qt`` (``from PySide6.QtCore import Qt`` is
enough), PySide6 6.11 creates a Python ``enum`` for every one of the namespace's 93 enums:
about 14 ms, a fifth of what Coco's start-up costs over a bare window's, which never reads it.
Two things keep that until after the window's first paint, when the first session opens:

- :data:`Qt` stands for ``PySide6.QtCore.Qt`` and fetches it when a member is first read, so
  the window's modules import it for nothing and read it as usual where they run later.
- :func:`set_enum_property` sets an enum-valued Qt property by the name of its key (as Qt
  Designer's files and style sheets do), which needs no Python enum: the widgets built before
  the first paint set their alignments, policies and styles with it. Code that runs before the
  first paint reads no member of :data:`Qt` (``tests/ui/runtime/test_startup_cost.py`` checks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject

__all__ = ["Qt", "set_enum_property"]

if TYPE_CHECKING:
    from PySide6.QtCore import Qt
else:

    class _Namespace:
        """``PySide6.QtCore.Qt``, fetched at the first member read; each member is kept on
        the instance, so a later read is a plain attribute lookup."""

        def __getattr__(self, name: str) -> Any:
            from PySide6 import QtCore

            value = getattr(QtCore.Qt, name)
            setattr(self, name, value)
            return value

        def __repr__(self) -> str:
            return "<PySide6.QtCore.Qt, read when first used>"

    Qt = _Namespace()


def set_enum_property(obj: QObject, name: str, key: str) -> None:
    """Set ``obj``'s Qt property ``name`` to the enum key ``key`` (flags: ``"AlignLeft|AlignTop"``),
    e.g. ``set_enum_property(label, "textFormat", "PlainText")`` for
    ``label.setTextFormat(Qt.TextFormat.PlainText)``. Raises ValueError when ``obj`` has no
    such property or the key is not one of its enum's."""
    meta = obj.metaObject()
    index = meta.indexOfProperty(name)
    if index < 0 or not meta.property(index).isEnumType():
        raise ValueError(f"{type(obj).__name__} has no enum property {name!r}")
    if not obj.setProperty(name, key):
        raise ValueError(f"{key!r} is not a value of {type(obj).__name__}.{name}")
