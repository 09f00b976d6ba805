"""python -m sam_model.serve: the sam-serve command (sam_model.serve.cli)."""

from sam_model.serve.cli import main

raise SystemExit(main())
