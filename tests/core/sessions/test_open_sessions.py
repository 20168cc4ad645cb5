"""The registry of sessions open in this process (``app.core.sessions.open_sessions``), and the import
circle it broke: the session library no longer loads the session to learn what is open."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

from app.core.sessions import open_sessions
from app.core.sessions.open_sessions import forget_open, open_at, track_open


class Opened:
    """Stands in for an open ``Session``: the registry only reads its rollout path."""

    def __init__(self, path: Path) -> None:
        self.rollout_path = path


def test_the_first_opener_is_found_by_its_path_until_it_leaves(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    first, second = Opened(path), Opened(path)
    track_open(first)  # type: ignore[arg-type]
    track_open(second)  # type: ignore[arg-type]  # a later opener only shows it read-only
    assert open_at(path) is first
    forget_open(second)  # type: ignore[arg-type]  # not the registered one: nothing changes
    assert open_at(path) is first
    forget_open(first)  # type: ignore[arg-type]
    assert open_at(path) is None


def test_a_session_dropped_unclosed_leaves_the_registry(tmp_path: Path) -> None:
    path = tmp_path / "dropped.jsonl"
    track_open(Opened(path))  # type: ignore[arg-type]  # no reference kept
    gc.collect()
    assert open_at(path) is None
    assert path.absolute() not in open_sessions._OPEN


def test_the_session_library_loads_without_the_session() -> None:
    code = (
        "import sys, app.core.sessions.library;"
        "assert 'app.core.session.coordinator' not in sys.modules, 'sessions imports session'"
    )
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# ------------------------------------------------------------------ no import circle

APP = Path(__file__).resolve().parents[3] / "app"
SESSION_MODULES = {
    "app.core.session.coordinator",
    "app.core.sessions.library",
    "app.core.sessions.open_sessions",
    "app.core.session.replay",
    "app.core.sessions.record",
    "app.core.session.config",
    "app.core.session.usage_meter",
    "app.core.session.notices",
    "app.core.session.turn.retry",
    "app.core.session.compaction_undo",
    "app.core.session.manual_compaction",
    "app.core.session.resume",
    "app.core.session.context_view",
    "app.core.session.turn",
    "app.core.session.turn.items",
    "app.core.session.turn.loop",
    "app.core.session.turn.request",
    "app.core.session.turn.task",
    "app.core.session.turn.tool_call",
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(APP.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The app modules ``path`` imports anywhere (function bodies too), except under
    ``if TYPE_CHECKING:`` (annotations only, never run)."""
    import ast

    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for orelse in child.orelse:
                    visit(orelse)
                continue
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                found.add(base)
                found.update(f"{base}.{alias.name}" for alias in child.names)
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {module for module in found if module in modules and module != name}


def test_no_import_circle_runs_through_the_session_modules() -> None:
    files = {_module_name(path): path for path in APP.rglob("*.py")}
    graph = {name: _imports(path, set(files)) for name, path in files.items()}
    assert SESSION_MODULES <= set(graph)
    for start in SESSION_MODULES:
        # Every module reachable from ``start``; a circle through it reaches ``start`` again.
        seen: set[str] = set()
        todo = list(graph[start])
        while todo:
            module = todo.pop()
            if module not in seen:
                seen.add(module)
                todo.extend(graph[module])
        assert start not in seen, f"{start} imports itself through a circle"
