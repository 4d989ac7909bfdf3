"""`precis`: the window (no arguments) and headless commands over the same engine and store."""
