"""Window geometry and pane sizes (config/window.ini), and the launcher's wait for first paint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QSplitter, QWidget

from app.main import _wait_for_first_paint
from app.ui.window.window_state import WINDOW_STATE_FILE, WindowState


def make_split(qtbot: Any) -> tuple[QWidget, QSplitter]:
    window = QWidget()
    qtbot.addWidget(window)
    splitter = QSplitter(Qt.Orientation.Horizontal, window)
    splitter.addWidget(QWidget())
    splitter.addWidget(QWidget())
    window.resize(640, 480)
    splitter.resize(600, 400)
    return window, splitter


def test_geometry_and_panes_round_trip(qtbot: Any, tmp_path: Path) -> None:
    window, splitter = make_split(qtbot)
    window.resize(700, 500)
    splitter.setSizes([150, 450])
    WindowState(tmp_path).save(window, splitter)

    again, again_splitter = make_split(qtbot)
    assert WindowState(tmp_path).restore(again, again_splitter)
    assert (again.width(), again.height()) == (700, 500)
    assert again_splitter.sizes() == splitter.sizes()


def test_no_file_or_a_damaged_one_means_the_default_layout(qtbot: Any, tmp_path: Path) -> None:
    window, splitter = make_split(qtbot)
    assert not WindowState(tmp_path).restore(window, splitter)  # nothing saved yet

    (tmp_path / WINDOW_STATE_FILE).write_bytes(
        b"[window]\ngeometry=@ByteArray(not a geometry)\n\x00\xff garbage"
    )
    assert not WindowState(tmp_path).restore(window, splitter)
    assert (window.width(), window.height()) == (640, 480)


def test_an_unwritable_folder_is_logged_not_raised(qtbot: Any, tmp_path: Path, caplog: Any) -> None:
    window, splitter = make_split(qtbot)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    WindowState(blocker / "config").save(window, splitter)
    assert "Could not save the window position" in caplog.text


def legacy_settings(config_dir: Path, geometry: str) -> None:
    """settings.json as Coco 0.1 wrote it, geometry included."""
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "settings.json").write_text(
        json.dumps({"model": "coco-demo", "window_geometry": geometry}), encoding="utf-8"
    )


def test_the_geometry_an_older_coco_kept_in_settings_json_is_restored(
    qtbot: Any, tmp_path: Path
) -> None:
    old, _ = make_split(qtbot)
    old.resize(720, 530)
    legacy_settings(tmp_path, bytes(old.saveGeometry().toBase64().data()).decode("ascii"))

    window, splitter = make_split(qtbot)
    assert WindowState(tmp_path).restore(window, splitter)
    assert (window.width(), window.height()) == (720, 530)

    # Once window.ini exists it is the one that counts.
    window.resize(660, 470)
    WindowState(tmp_path).save(window, splitter)
    again, again_splitter = make_split(qtbot)
    assert WindowState(tmp_path).restore(again, again_splitter)
    assert (again.width(), again.height()) == (660, 470)


def test_a_damaged_legacy_geometry_means_the_default_layout(qtbot: Any, tmp_path: Path) -> None:
    window, splitter = make_split(qtbot)
    legacy_settings(tmp_path, "not base64 of a geometry")
    assert not WindowState(tmp_path).restore(window, splitter)
    (tmp_path / "settings.json").write_text('{"window_geometry": ', encoding="utf-8")
    assert not WindowState(tmp_path).restore(window, splitter)
    assert (window.width(), window.height()) == (640, 480)


class Recording(QWidget):
    def __init__(self) -> None:
        super().__init__()
        self.close_events = 0

    def closeEvent(self, event: Any) -> None:
        self.close_events += 1
        super().closeEvent(event)


def test_a_close_request_before_the_first_paint_is_held_back_and_reported(qtbot: Any) -> None:
    window = Recording()  # never shown, so it never paints: the wait ends at its time limit
    qtbot.addWidget(window)
    QTimer.singleShot(10, window.close)

    assert _wait_for_first_paint(window, timeout_ms=300) is True
    assert window.close_events == 0  # held back, for the launcher to repeat once it runs



def test_the_last_session_is_saved_by_a_worker_thread_and_written_before_the_window_closes(
    qtbot: Any, make_window: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    """Opening a session remembers it for the next start: the write (an fsync) is not made
    on the window's thread, and it is on disk once the window has closed."""
    import threading

    from app.core.settings import SettingsStore

    saves: list[tuple[str, bool]] = []  # (last session, made on the window's thread)
    real_save = SettingsStore.save

    def save(self: SettingsStore, settings: Any) -> None:
        saves.append(
            (settings.last_session_id, threading.current_thread() is threading.main_thread())
        )
        real_save(self, settings)

    monkeypatch.setattr(SettingsStore, "save", save)
    window = make_window()
    first = window.session.id
    qtbot.waitUntil(window.start_new_session().done, timeout=5000)
    second = window.session.id
    closed: list[bool] = []
    window.closed.connect(lambda: closed.append(True))
    window.close()
    qtbot.waitUntil(lambda: bool(closed), timeout=5000)
    remembered = [(session, on_main) for session, on_main in saves if session in (first, second)]
    assert [session for session, _ in remembered][-2:] == [first, second]
    assert not any(on_main for _, on_main in remembered)
    saved, _ = SettingsStore(tmp_path / "config").load()
    assert saved.last_session_id == second
