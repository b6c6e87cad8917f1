"""Where the native parts of cairn (cairn-cc, cairn-pool, cairn-analyze, the
benchmarks) live.

In a checkout they are in the build directory: $CAIRN_BUILD, else ./build
of the source tree this package runs from (an editable install). Installed
(`cmake --install`, the .deb, or a wheel beside them), the tools are found
next to the running `cairn` command, then on PATH. $CAIRN_BUILD, when set,
is the only place looked in."""
import os
import shutil
import sys
from pathlib import Path

SOURCE_ROOT = Path(__file__).resolve().parents[2]

# subdirectories of a build directory that hold tools, in search order
_BUILD_SUBDIRS = ("runtime", "compiler", "analyzer", "bench", "examples", ".")


def in_checkout() -> bool:
    """True when this package runs from a source tree (not an install)."""
    return (SOURCE_ROOT / "python" / "pyproject.toml").is_file() and \
        (SOURCE_ROOT / "CMakeLists.txt").is_file()


def build_dir() -> Path:
    env = os.environ.get("CAIRN_BUILD")
    return Path(env) if env else SOURCE_ROOT / "build"


def _installed_tool(name: str):
    """NAME beside the running `cairn` script, else on PATH; None if neither."""
    script = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
    if script is not None and script.name == "cairn":
        beside = script.parent / name
        if beside.is_file() and os.access(beside, os.X_OK):
            return beside
    found = shutil.which(name)
    return Path(found) if found else None


def tool(name: str) -> Path:
    """Path of a native tool (e.g. 'cairn-pool'): built or installed."""
    if os.environ.get("CAIRN_BUILD") or in_checkout():
        for sub in _BUILD_SUBDIRS:
            p = build_dir() / sub / name
            if p.exists():
                return p
        if os.environ.get("CAIRN_BUILD"):
            raise SystemExit(f"cairn: {name} is not built in {build_dir()}; "
                             f"run scripts/build.sh (or unset CAIRN_BUILD)")
    p = _installed_tool(name)
    if p is not None:
        return p
    if in_checkout():
        raise SystemExit(f"cairn: {name} is not built in {build_dir()} and not on PATH; "
                         f"run scripts/build.sh (or set CAIRN_BUILD)")
    raise SystemExit(f"cairn: {name} not found beside the cairn command or on PATH; "
                     f"install cairn's tools (docs/install.md) or put their bin/ on PATH")
