from explainer.cli import main

raise SystemExit(main())
