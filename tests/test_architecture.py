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


def circles(imports: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of a module graph: its strongly connected components of two or more
    modules (or of one module importing itself), each sorted, found without recursion."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(imports):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(imports.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, pending = work[-1]
            if pending:
                nxt = pending.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(imports.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in imports.get(node, ()):
                    found.append(sorted(component))
    return sorted(found)


def test_the_circle_finder_finds_circles_and_only_them() -> None:
    graph = {
        "a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": set(),
        "f": {"f"}, "g": {"d"},
    }
    assert circles(graph) == [["a", "b", "c"], ["f"]]
    assert circles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_no_module_of_app_is_in_an_import_circle() -> None:
    graph = grimp.build_graph("app", exclude_type_checking_imports=False)
    imports = {
        module: {m for m in graph.find_modules_directly_imported_by(module) if m in graph.modules}
        for module in graph.modules
        if module.startswith("app.")
    }
    found = circles(imports)
    assert found == [], "import circles: " + "; ".join(" <-> ".join(c) for c in found)


@pytest.mark.parametrize(
    "path", sorted(CORE.rglob("*.py")), ids=lambda p: str(p.relative_to(REPO))
)
def test_every_core_module_is_at_most_400_lines(path: Path) -> None:
    assert _lines(path) <= CORE_MODULE_LINES, (
        f"{path.relative_to(REPO)} has {_lines(path)} lines: split it by concept"
    )


def test_the_session_is_a_coordinator() -> None:
    assert _lines(CORE / "session.py") <= COORDINATOR_LINES
