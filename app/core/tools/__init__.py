"""The tools a model can call: the function-tool contract and the read-only workspace tools."""
