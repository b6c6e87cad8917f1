"""Where the built native parts of cairn live.

The build directory is found from $CAIRN_BUILD, else ./build next to the
source tree this package was installed from (editable install)."""
import os
from pathlib import Path

SOURCE_ROOT = Path(__file__).resolve().parents[2]


def build_dir() -> Path:
    env = os.environ.get("CAIRN_BUILD")
    return Path(env) if env else SOURCE_ROOT / "build"


def tool(name: str) -> Path:
    """Path of a native tool built by CMake (e.g. 'cairn-pool')."""
    for sub in ("runtime", "compiler", "analyzer", "bench", "examples", "."):
        p = build_dir() / sub / name
        if p.exists():
            return p
    raise SystemExit(f"cairn: {name} is not built in {build_dir()}; "
                     f"run scripts/build.sh (or set CAIRN_BUILD)")
