"""`python -m app` runs the same command line as `ridge`."""
from app.cli import main

raise SystemExit(main())
