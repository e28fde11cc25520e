"""What the tests share beyond fixtures: where things are, fakes, waiting, strict mode."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]        # the repository root
