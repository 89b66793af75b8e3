from pitui.cli import main

raise SystemExit(main())
