from explainer.surfaces.cli import main

raise SystemExit(main())
