"""python -m sam_model.serve: the sam-serve command (sam_model.serve.cli)."""

from sam_model.serve.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
