"""The main window and its frame: header, status line, banners, toasts, keys and what it restores."""
