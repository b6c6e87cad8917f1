import os
from pathlib import Path

# tests find the built tools through $CAIRN_BUILD (default ./build)
os.environ.setdefault("CAIRN_BUILD", str(Path(__file__).resolve().parents[1] / "build"))
os.environ.setdefault("CAIRN_PMEM_FORCE", "1")
