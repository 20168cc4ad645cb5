"""PyInstaller's entry script: the bundled ``coco`` executable runs :func:`app.main.main`."""

from app.main import main

raise SystemExit(main())
