"""The window's tools: the workspace picker, live tool status and the inline permission prompt."""
