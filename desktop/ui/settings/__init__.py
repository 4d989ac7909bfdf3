"""Settings: provider profiles, compaction thresholds, instructions, language and MCP servers."""
