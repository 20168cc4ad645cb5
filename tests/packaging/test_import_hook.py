"""PySide6's per-import question ("does this module's source mention PySide6?") answered by a
byte search: the same answers as PySide6's own test, without reading each file through
``inspect.getsource`` (issue 22, start-up)."""

from __future__ import annotations

import inspect
import json
import sys
import types

import PySide6.QtCore  # noqa: F401 - PySide6's import hook must exist

import app.ui.window.status
from app.ui.runtime import import_hook


def test_the_byte_search_answers_as_pyside6s_own_test() -> None:
    def pysides_test(module: types.ModuleType) -> bool:  # what PySide6 does, by the book
        return "PySide6" in inspect.getsource(module)

    for module in (app.ui.window.status, json, import_hook, inspect):
        answer = import_hook.source_mentions_pyside(module, pysides_test)
        assert answer is pysides_test(module)
    assert import_hook.source_mentions_pyside(app.ui.window.status, pysides_test) is True
    assert import_hook.source_mentions_pyside(json, pysides_test) is False


def test_a_module_without_a_source_file_is_left_to_pyside6() -> None:
    asked: list[str] = []

    def fallback(module: types.ModuleType) -> bool:
        asked.append(module.__name__)
        return False

    built = types.ModuleType("made_in_memory")
    assert import_hook.source_mentions_pyside(built, fallback) is False
    assert import_hook.source_mentions_pyside(sys, fallback) is False
    assert asked == ["made_in_memory", "sys"]


def test_install_is_done_once() -> None:
    import_hook.install()
    feature = sys.modules["shibokensupport.feature"]
    installed = feature._mod_uses_pyside
    assert getattr(installed, "_coco_fast", False)
    assert import_hook.install() is False and feature._mod_uses_pyside is installed
