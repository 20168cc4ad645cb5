"""The shape of the code holds (issue 26): every core module is small enough to read in one
sitting, the session is a coordinator, and no two modules of ``app`` import each other, however
indirectly (an import inside a function counts, and so does one made only for annotations: a
circle there is still two concepts that cannot be read apart)."""

from __future__ import annotations

from pathlib import Path

import grimp
import pytest

REPO = Path(__file__).resolve().parents[1]
CORE = REPO / "app" / "core"
CORE_MODULE_LINES = 400
COORDINATOR_LINES = 300


def _lines(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(1 for _ in handle)


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
    "path", sorted(CORE.rglob("*.py")), ids=lambda p: str(p.relative_to(REPO))
)
def test_every_core_module_is_at_most_400_lines(path: Path) -> None:
    assert _lines(path) <= CORE_MODULE_LINES, (
        f"{path.relative_to(REPO)} has {_lines(path)} lines: split it by concept"
    )


def test_the_session_is_a_coordinator() -> None:
    assert _lines(CORE / "session" / "coordinator.py") <= COORDINATOR_LINES
