import sys

if len(sys.argv) <= 1:  # the window, without importing the CLI's parser and its commands first
    from desktop.ui.app import run_app

    raise SystemExit(run_app())

from desktop.cli.main import main

raise SystemExit(main())
