"""`python -m app` behaves like the `pagewise` console script."""
from app.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
