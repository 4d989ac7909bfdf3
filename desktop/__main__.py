from desktop.cli.main import main

raise SystemExit(main())
