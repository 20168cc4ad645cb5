"""The shape of the code holds (issues 26 and 35): every module of the core, the window and the
demo server is small enough to read in one sitting, the session is a coordinator, every
package's top level reads as a table of contents, and no two modules of ``app`` import each
other, however indirectly (an import inside a function counts, and so does one made only for
annotations: a circle there is still two concepts that cannot be read apart)."""

from __future__ import annotations

from pathlib import Path

import grimp
import pytest

REPO = Path(__file__).resolve().parents[1]
APP = REPO / "app"
CORE = APP / "core"
LAYERS = ("core", "ui", "demo")
MODULE_LINES = 400
COORDINATOR_LINES = 300
TOP_LEVEL_MODULES = 15


def _lines(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(1 for _ in handle)


def _packages() -> list[Path]:
    return sorted({init.parent for init in APP.rglob("__init__.py")})


def test_no_module_of_app_is_in_an_import_circle() -> None:
    graph = grimp.build_graph("app", exclude_type_checking_imports=False)
    # An import from a to b closes a circle exactly when b leads back to a.
    found = sorted(
        " -> ".join((a, *chain))
        for a in graph.modules
        for b in graph.find_modules_directly_imported_by(a)
        if b.startswith("app.") and (chain := graph.find_shortest_chain(importer=b, imported=a))
    )
    assert found == [], "import circles: " + "; ".join(found)


@pytest.mark.parametrize(
    "path",
    sorted(path for layer in LAYERS for path in (APP / layer).rglob("*.py")),
    ids=lambda p: str(p.relative_to(REPO)),
)
def test_every_module_of_the_core_the_window_and_the_demo_is_at_most_400_lines(
    path: Path,
) -> None:
    assert _lines(path) <= MODULE_LINES, (
        f"{path.relative_to(REPO)} has {_lines(path)} lines: split it by concept"
    )


@pytest.mark.parametrize("package", _packages(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_package_top_level_holds_more_than_15_modules(package: Path) -> None:
    modules = sorted(p.name for p in package.glob("*.py") if p.name != "__init__.py")
    assert len(modules) <= TOP_LEVEL_MODULES, (
        f"{package.relative_to(REPO)} holds {len(modules)} modules side by side: "
        "group them into sub-packages named after what they hold"
    )


def test_the_session_is_a_coordinator() -> None:
    assert _lines(CORE / "session" / "coordinator.py") <= COORDINATOR_LINES


def test_the_rules_see_every_layer() -> None:
    # A layer moved or renamed would silently leave the rules above with nothing to check.
    for layer in LAYERS:
        assert (APP / layer / "__init__.py").is_file(), layer
    assert len(_packages()) >= 20
