"""Tool names within the providers' rule, and schemas every API takes."""

from __future__ import annotations

from app.core.tools.mcp.names import NAME_RULE, adapt_schema, tool_name


def test_names_are_namespaced_valid_and_unique() -> None:
    assert tool_name("files", "read_file") == "mcp__files__read_file"
    odd = tool_name("my server.v2", "get/thing!")
    assert NAME_RULE.match(odd) and odd.startswith("mcp__my_server_v2__get_thing")
    long = tool_name("s" * 40, "t" * 40)
    assert NAME_RULE.match(long) and len(long) == 64
    assert tool_name("s" * 40, "t" * 40) == long  # stable across runs
    assert tool_name("s" * 40, "t" * 41) != long
    taken = {tool_name("a", "b")}
    again = tool_name("a", "b", taken)
    assert again not in taken and NAME_RULE.match(again)


def test_schemas_are_objects_with_refs_inlined_and_type_lists_reduced() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#", "title": "Args", "type": "object",
        "properties": {
            "where": {"$ref": "#/$defs/Place"},
            "limit": {"type": ["integer", "null"]},
            "examples": {"type": "string"},  # a property's name, not the keyword
        },
        "$defs": {"Place": {"type": "object", "properties": {"city": {"type": "string"}}}},
    }
    out = adapt_schema(schema)
    assert "$schema" not in out and "$defs" not in out and "title" not in out
    assert out["properties"]["where"]["properties"]["city"] == {"type": "string"}
    assert out["properties"]["limit"]["type"] == "integer"
    assert "null" in out["properties"]["limit"]["description"]
    assert out["properties"]["examples"] == {"type": "string"}
    assert schema["properties"]["where"] == {"$ref": "#/$defs/Place"}  # original untouched


def test_a_schema_that_is_not_an_object_is_wrapped_and_none_gives_an_empty_object() -> None:
    assert adapt_schema(None) == {"type": "object", "properties": {}}
    assert adapt_schema({"type": "object"}) == {"type": "object", "properties": {}}
    wrapped = adapt_schema({"anyOf": [{"type": "string"}, {"type": "integer"}]})
    assert wrapped["type"] == "object" and wrapped["required"] == ["input"]
    recursive = adapt_schema({"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}},
                              "$defs": {"N": {"type": "object",
                                              "properties": {"next": {"$ref": "#/$defs/N"}}}}})
    assert recursive["type"] == "object"  # a recursive reference ends, described
