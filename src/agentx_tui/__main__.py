from agentx_tui.cli import main

raise SystemExit(main())
