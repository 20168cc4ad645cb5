"""The imports that used to run in circles run one way: the Markdown text helpers under the
renderer and the document, the row models under their widgets, the recall index under its tool.
Imports made only for annotations count here too, as they do in the project's structure drawing.
"""

from __future__ import annotations

import grimp
import pytest

# Each group's modules, in the order the imports run: a module may import the ones after it.
LAYERED = [
    "app.ui.transcript.row_widgets", "app.ui.transcript.expandable_widgets",
    "app.ui.transcript.row_widget_base", "app.ui.transcript.message_rows", "app.ui.transcript.row_models", "app.ui.richtext.markdown_document", "app.ui.richtext.markdown",
    "app.ui.style.widgets", "app.ui.text.long_text", "app.ui.text.markdown_blocks",
]
RECALL = [
    "app.core.recall", "app.core.recall.tool", "app.core.recall.index", "app.core.recall.records",
    "app.core.recall.store", "app.core.recall.results", "app.core.recall.searchable",
    "app.core.recall.query",
]


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("app", exclude_type_checking_imports=False, cache_dir=None)


def upward(graph: grimp.ImportGraph, order: list[str]) -> list[tuple[str, str]]:
    """The imports (direct or through any other module) from a module to one before it."""
    found = []
    for low, module in enumerate(order):
        for above in order[:low]:
            if graph.chain_exists(importer=module, imported=above):
                found.append((module, above))
    return found


def test_the_ui_text_and_row_modules_import_one_way(graph: grimp.ImportGraph) -> None:
    assert upward(graph, LAYERED) == []


def test_the_row_models_know_no_widget(graph: grimp.ImportGraph) -> None:
    imported = graph.find_modules_directly_imported_by("app.ui.transcript.row_models")
    assert not {
        "app.ui.transcript.row_widgets", "app.ui.transcript.row_widget_base",
        "app.ui.transcript.expandable_widgets", "app.ui.transcript.compaction_marker",
    } & imported
    assert graph.chain_exists(importer="app.ui.transcript.row_widgets", imported="app.ui.transcript.row_models")


def test_the_recall_modules_import_one_way(graph: grimp.ImportGraph) -> None:
    assert upward(graph, RECALL) == []
