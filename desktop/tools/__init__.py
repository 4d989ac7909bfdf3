"""Tools the model may call: built-in workspace tools, MCP servers, the permission policy and the runner.

Pure Python and asyncio (never Qt). The engine does not import this package: it sees only its ``ToolRunner``
protocol, which ``Toolbox`` implements; the runtime wires the two together.
"""
