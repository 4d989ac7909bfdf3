"""Shared look and words: theme, icons, number formats, plurals and translations."""
