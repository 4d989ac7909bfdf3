import sys

if len(sys.argv) <= 1:  # the window, without importing the CLI's parser and its commands first
    from desktop.ui.launch import main as window

    raise SystemExit(window())

from desktop.cli.main import main

raise SystemExit(main())
