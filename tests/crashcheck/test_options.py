"""`cairn crashcheck --jobs`: the workers split the crash points and share
the set of checked images, so the counts equal one worker's."""
import json

from test_corpus import build, crashcheck, pool  # noqa: F401 (pool is a fixture)


def test_jobs_split_the_work_and_check_each_image_once(tmp_path, pool):  # noqa: F811
    prog = build("flag_before_data", True, tmp_path)
    counts = []
    for jobs in ("1", "2"):
        out = tmp_path / f"j{jobs}.json"
        r = crashcheck("--quiet", "--jobs", jobs, "--json", out, "--check", f"{prog} check {{pool}}",
                       "--", prog, "run", pool, pool=pool)
        assert r.returncode == 1, r.stdout + r.stderr[-2000:]
        j = json.loads(out.read_text())
        counts.append((j["crash_points"], j["states"], j["failed"], j["duplicates"]))
    assert counts[0] == counts[1] and counts[0][2] > 0
