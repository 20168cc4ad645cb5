"""Editing and switching branch on a real display (issue 36 item 5), with real input: the
pointer clicks a message's Edit, the keyboard types the new text and Enter resends it, the
pointer clicks ‹ and the first version comes back in place."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import wait_for

pytestmark = pytest.mark.display


def test_click_edit_type_enter_then_click_previous_to_switch_back(probe: Any) -> None:
    app = probe(["Paris.", "Berlni.", "Berlin."])
    for question, n in (("capital of France?", 2), ("capital of Germny?", 4)):
        app.key("ctrl+l")  # the composer
        app.type(question)
        app.key("Return")
        wait_for(lambda n=n: len(app.rows()) == n and app.idle(), f"the answer to {question}")

    app.click("edit", "capital of Germny?")
    wait_for(lambda: any(r["editing"] for r in app.ask("rows")["rows"]), "the editor open")
    app.key("ctrl+a")
    app.type("capital of Germany?")
    app.key("Return")
    wait_for(lambda: app.rows()[2:] == [("user", "capital of Germany?"),
                                        ("assistant", "Berlin.")] and app.idle(),
             "the edited message answered on its new branch")
    assert app.ask("rows")["rows"][2]["branches"] == [1, 2]

    app.click("previous", "capital of Germany?")
    wait_for(lambda: app.rows()[2:] == [("user", "capital of Germny?"),
                                        ("assistant", "Berlni.")],
             "the first version back in place")
    assert app.ask("rows")["rows"][2]["branches"] == [0, 2]
    assert app.rows()[:2] == [("user", "capital of France?"), ("assistant", "Paris.")]
