"""`python -m benchdash_cli`, the same as the installed `benchdash` command."""

from benchdash_cli.main import main

raise SystemExit(main())
