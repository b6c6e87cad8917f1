"""Power loss during the second recovery, on every state of the first.

rt_jobs.c's recover job opens a pool that a crash left with transactions
in flight on three lanes: its recovery rolls them back under the trace,
so every fence of the roll-back, of the open's clean flag and of the
commits after it is a crash point (test_runtime_jobs.py). Here every
distinct crash image of that run that the next open has to recover (not
closed cleanly) is opened again under the trace (`rt_jobs recover reopen
IMAGE`: the second recovery, then one commit and a clean close), and
`cairn crashcheck` checks every crash state of that run with the job's
check, which recovers a third time: power loss inside recovery, twice,
and again after the second recovery completed.

    first = first_level(prog, work)                 # the images, deduplicated
    res = second_level(prog, first["images"], work)  # a crashcheck run per image

The first run's check command saves each state's image before the job's
check opens it (the open recovers it), named with the commits
acknowledged at that state. An image left by several states must, after
any recovery, hold the count of the most acknowledged of them: one more
(the crashed pool's own commit) than that number is the second run's
RT_RECOVER_BASE, so its check holds the second run to the first run's
acknowledgments too. CAIRN_TWICE_JOBS second-level runs go at once
(default 2), each one process (--jobs 1).
"""
import hashlib
import json
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rtjobs import BUILD, cairn_crashcheck, crashcheck

JOBS_AT_ONCE = int(os.environ.get("CAIRN_TWICE_JOBS", "2"))
SUMMED = ("crash_points", "exhaustive_points", "states", "failed", "duplicates", "skipped")


def first_level(prog, work):
    """crashcheck of the recover job, every state checked by the job's check
    and saved; the distinct images the next open must recover, in the order
    the run first left them, each with the count it must hold (base) and
    the transactions still open in it (3 untouched, 0 all rolled back).
    Returns the run's counts and "images": [(path, base, open_tx)]."""
    work = Path(work)
    saved = work / "first-states"
    saved.mkdir()
    out = work / "first.json"
    save = (f'cp --sparse=always {{pool}} "$(mktemp {saved}/c$CAIRN_CRASH_COMMITS-XXXXXXXX)" '
            f'&& exec {prog} recover check {{pool}}')
    r = crashcheck(prog, "recover", work / "first.pool", ["--json", out, "--check", save])
    assert r.returncode == 0, f"the first recovery's run failed:\n{r.stdout}{r.stderr[-3000:]}"
    res = json.loads(out.read_text())
    files = sorted(saved.iterdir(), key=lambda f: (f.stat().st_mtime_ns, f.name))
    by_content = {}
    for f in files:
        acked = int(f.name[1:].split("-")[0])
        digest = hashlib.sha256(f.read_bytes()).digest()
        if digest in by_content:
            by_content[digest][1] = max(by_content[digest][1], acked)
            f.unlink()
        else:
            by_content[digest] = [f, acked]
    images, clean = [], 0
    for f, acked in by_content.values():
        info = subprocess.run([str(BUILD / "runtime" / "cairn-pool"), "--json", "info", str(f)],
                              capture_output=True, text=True)
        assert info.returncode == 0, f"{f}: cairn-pool info failed: {info.stderr}"
        pool = json.loads(info.stdout)
        if pool["clean"]:
            clean += 1                    # opens with no recovery: nothing to crash
        else:
            images.append((f, 1 + acked, pool["open_transactions"]))
    return dict(**{k: res[k] for k in SUMMED}, saved=len(files), distinct=len(by_content),
                clean=clean, images=images)


def second_run(prog, i, image, base, work, run=subprocess.run):
    """crashcheck of `rt_jobs recover reopen` on a copy of image, every state
    checked by the job's check held to base"""
    pool, out = Path(work) / f"second-{i}.pool", Path(work) / f"second-{i}.json"
    shutil.copyfile(image, pool)
    out.unlink(missing_ok=True)
    try:
        r = cairn_crashcheck(["--json", out, "--check",
                              f"RT_RECOVER_BASE={base} {prog} recover check {{pool}}",
                              "--", prog, "recover", "reopen", pool], run=run)
    finally:
        pool.unlink(missing_ok=True)
    res = json.loads(out.read_text()) if r.returncode in (0, 1) and out.exists() else None
    return dict(image=Path(image).name, base=base, returncode=r.returncode, result=res,
                ran_to_end="exited with status" not in r.stderr,
                output=r.stdout + r.stderr[-3000:])


def second_level(prog, images, work, run=subprocess.run, stop_at_failure=False):
    """second_run over every (image, base, _) of images, JOBS_AT_ONCE at a time;
    with stop_at_failure, the runs not started when one fails are dropped.
    Returns the summed counts, "runs" done, "failed_runs" and "rows"."""
    rows = []
    with ThreadPoolExecutor(JOBS_AT_ONCE) as ex:
        futures = [ex.submit(second_run, prog, i, img, base, work, run)
                   for i, (img, base, _) in enumerate(images)]
        for f in futures:
            if f.cancelled():
                continue
            rows.append(f.result())
            if stop_at_failure and rows[-1]["returncode"] != 0:
                ex.shutdown(wait=True, cancel_futures=True)
    done = [r["result"] for r in rows if r["result"]]
    return dict(**{k: sum(d[k] for d in done) for k in SUMMED}, runs=len(rows),
                failed_runs=sum(r["returncode"] != 0 for r in rows), rows=rows)
