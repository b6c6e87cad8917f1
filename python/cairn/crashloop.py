"""Kill a writer at random instants, reopen, verify: the SIGKILL stress loop
behind `cairn demo` and the stress tests (NVL-C section 5.1, made stricter:
after every kill the pool is checked in full and its contents must equal a
replay of exactly the operations it says were committed, and no operation
the writer reported committed may be missing)."""
from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from cairn import paths


@dataclass
class KillResult:
    round: int
    delay_ms: float
    reported: int          # last "committed N" the writer printed
    recovered: int         # operations the reopened pool holds
    verify_ok: bool
    check_ok: bool
    detail: str = ""

    @property
    def torn(self) -> bool:
        """The kill landed inside a transaction that recovery rolled back."""
        m = re.search(r"(\d+) undo records in (\d+) torn", self.detail)
        return bool(m and int(m.group(2)) > 0)


@dataclass
class LoopReport:
    results: list[KillResult] = field(default_factory=list)

    @property
    def failures(self) -> list[KillResult]:
        return [r for r in self.results if not (r.verify_ok and r.check_ok and r.recovered >= r.reported)]


def _env() -> dict:
    env = dict(os.environ)
    env.setdefault("CAIRN_PMEM_FORCE", "1")
    return env


def _read_progress(path: Path) -> int:
    try:
        return int.from_bytes(path.read_bytes()[:8], "little")
    except (OSError, ValueError):
        return 0


def verify(writer: Path, pool: Path, env: dict) -> tuple[bool, int, str]:
    v = subprocess.run([str(writer), "verify", str(pool)], capture_output=True, text=True, env=env, timeout=120)
    m = re.search(r"(\d+) operations committed", v.stdout)
    return v.returncode == 0, int(m.group(1)) if m else -1, (v.stdout + v.stderr).strip()


def check(pool: Path, env: dict) -> tuple[bool, str]:
    c = subprocess.run([str(paths.tool("cairn-pool")), "check", str(pool)], capture_output=True,
                       text=True, env=env, timeout=300)
    return c.returncode == 0, (c.stdout + c.stderr).strip()


def kill_loop(pool: Path, kills: int, writer: Path | None = None, min_ms: float = 2.0,
              max_ms: float = 60.0, seed: int | None = None, progress=None) -> LoopReport:
    """Run `writer run POOL` and SIGKILL it `kills` times at random instants."""
    writer = writer or paths.tool("kvstore")
    rng = random.Random(seed)
    env = _env()
    report = LoopReport()
    progress_file = Path(str(pool) + ".progress")
    env["KV_PROGRESS"] = str(progress_file)
    for i in range(kills):
        delay = rng.uniform(min_ms, max_ms)
        progress_file.write_bytes(b"\0" * 8)
        proc = subprocess.Popen([str(writer), "run", str(pool), "0"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env)
        # wait until the writer is committing, then kill it a random time later
        deadline = time.monotonic() + 10
        while _read_progress(progress_file) == 0 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.0005)
        time.sleep(delay / 1000.0)
        proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate()
        reported = _read_progress(progress_file)
        if proc.returncode not in (-signal.SIGKILL, 0):
            res = KillResult(i, delay, reported, -1, False, False,
                             f"writer failed ({proc.returncode}): {err.decode(errors='replace').strip()}")
            report.results.append(res)
            if progress:
                progress(res)
            continue
        ok, recovered, vdetail = verify(writer, pool, env)
        cok, cdetail = check(pool, env)
        detail = vdetail
        if not cok:
            detail += "\n" + cdetail
        res = KillResult(i, delay, reported, recovered, ok, cok, detail)
        report.results.append(res)
        if progress:
            progress(res)
    progress_file.unlink(missing_ok=True)
    return report
