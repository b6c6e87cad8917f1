"""`cairn sim`: a trace-driven timing model of persist ordering hardware
(WHISPER/HOPS section 6, Fig. 10) over a CAIRN_TRACE file's epochs
(cairn.trace_epochs). docs/trace.md, "cairn sim", states the model.

Designs, all fed the same epochs:
  x86       clwb + sfence as cairn issues them; a fence waits until every
            line flushed or written non-temporally before it reached PM
  x86-pwq   the same, with a persistent write queue at the memory
            controller: a line is durable once it reaches the controller
  x86-eadr  persistent caches: flushes are dropped; non-temporal lines
            still travel to the controller's queue
  hops      per-thread persist buffers (HOPS): stores enter the buffer
            tagged with the thread's epoch timestamp; ofence only bumps the
            timestamp; epochs drain in order in the background, one epoch's
            lines all at once after the previous epoch's acks (it writes
            whole lines, as a non-temporal store does: nt_cycles); a full
            buffer stalls the thread; dfence waits for its buffer to drain;
            an epoch writing a line another thread's buffered epoch wrote
            drains only after that epoch (cross-thread dependency);
            several versions of a line may be buffered (self-dependencies
            cost nothing)
  hops-pwq  HOPS with the persistent write queue
  ideal     no ordering or durability cost at all (not crash-consistent)
"""
import json
import math
import os
import re
import subprocess
import tempfile


DESIGNS = ("x86", "x86-pwq", "x86-eadr", "hops", "hops-pwq", "ideal")

# WHISPER Table 3 (a 2 GHz core; PM 160 cycles, DRAM 40 cycles) and section
# 6.4 (32-entry persist buffers); what Table 3 does not give is marked.
WHISPER = {
    "cpu_ghz": 2.0,
    "pm_cycles": 160,          # a line written to PM (Table 3)
    "pwq_cycles": 40,          # a line reaching the controller's queue: a DRAM access (Table 3's 40)
    "nt_cycles": 160,          # a line written non-temporally, to PM
    "store_cycles": 1,         # one store issued (not in Table 3: an L1 hit)
    "line_stores": 8,          # stores the runtime makes to write a line the trace shows only flushed
    "flush_cycles": 1,         # issuing one clwb or one non-temporal line (not in Table 3)
    "fence_cycles": 1,         # an sfence or ofence with nothing to wait for (not in Table 3)
    "pb_entries": 32,          # persist buffer entries per thread (section 6.4)
    "work_cycles": 0,          # computation per epoch the trace does not show (loads, ALU)
}


def host_preset(tool_path, pool_dir="/dev/shm"):
    """Parameters from this machine: its clock and the cost of one
    store + clwb + sfence round and one non-temporal line + sfence round,
    as cairn-flush-floor (bench/runtime/flush_floor.c) measures them on a
    file mapping. PM here is whatever backs pool_dir (DRAM for /dev/shm):
    a round is the whole write-back, so the queue changes nothing (x86 and
    x86-pwq come out alike, as do hops and hops-pwq)."""
    ghz = _cpu_ghz()
    with tempfile.TemporaryDirectory(dir=pool_dir) as d:
        out = subprocess.run([str(tool_path), "--pool", os.path.join(d, "floor"),
                              "--max-rounds", "1"], capture_output=True, text=True, check=True).stdout
    rounds = {}
    for line in out.splitlines():
        rec = json.loads(line)
        rounds[rec["flush"] if rec["flush"] == "nt" else "flush"] = rec["ns_per_op"]
    if "flush" not in rounds or "nt" not in rounds:
        raise RuntimeError(f"{tool_path} printed no round times: {out!r}")
    p = dict(WHISPER)
    p.update(cpu_ghz=ghz, pm_cycles=round(rounds["flush"] * ghz), pwq_cycles=round(rounds["flush"] * ghz),
             nt_cycles=round(rounds["nt"] * ghz))
    p["measured"] = {"flush_round_ns": rounds["flush"], "nt_round_ns": rounds["nt"], "cpu_ghz": ghz}
    return p


def _cpu_ghz():
    """The CPU's nominal clock from /proc/cpuinfo (model name's GHz, else
    the current MHz)."""
    try:
        text = open("/proc/cpuinfo").read()
    except OSError:
        return WHISPER["cpu_ghz"]
    m = re.search(r"model name.*@\s*([\d.]+)GHz", text)
    if m:
        return float(m.group(1))
    m = re.search(r"cpu MHz\s*:\s*([\d.]+)", text)
    return float(m.group(1)) / 1000 if m else WHISPER["cpu_ghz"]


# the parameters cairn-trace-scan's model takes (the rest are for the output)
_MODEL = ("pm_cycles", "pwq_cycles", "nt_cycles", "store_cycles", "line_stores", "flush_cycles",
          "fence_cycles", "pb_entries", "work_cycles")


def simulate(t, params=None, progress=None):
    """Simulated runtime of trace t under every design (cairn-trace-scan
    --sim runs the model over the trace's epochs): a dict with cycles, ns
    and runtime normalized to x86, per design."""
    from cairn import trace_epochs as te
    p = dict(WHISPER if params is None else params)
    args = ["--sim"]
    for k in _MODEL:
        args += ["--param", f"{k}={p[k]!r}"]
    r = te.scan(t, args, progress)
    cycles = {d: float(r["cycles"][d]) for d in DESIGNS}
    base = cycles["x86"]
    return {
        "epochs": r["epochs"],
        "params": {k: v for k, v in p.items()},
        "designs": {d: {"cycles": cycles[d], "ns": cycles[d] / p["cpu_ghz"],
                        "normalized": cycles[d] / base if base else None} for d in DESIGNS},
        "hops_buffer_stall_cycles": float(r["hops_buffer_stall_cycles"]),
    }


def print_table(results, out):
    """Fig. 10 as text: one row per workload, runtimes normalized to x86."""
    w = out.write
    w(f"{'workload':<28}" + "".join(f"{d:>10}" for d in DESIGNS) + f"{'x86 ms':>10}\n")
    for name, r in results:
        w(f"{name[:27]:<28}" + "".join(
            f"{r['designs'][d]['normalized']:>10.3f}" if r['designs'][d]['normalized'] is not None
            else f"{'n/a':>10}" for d in DESIGNS) + f"{r['designs']['x86']['ns'] / 1e6:>10.3f}\n")
    if len(results) > 1:
        w(f"{'geometric mean':<28}" + "".join(
            f"{_gmean([r['designs'][d]['normalized'] for _, r in results]):>10.3f}"
            for d in DESIGNS) + "\n")


def _gmean(values):
    v = [x for x in values if x]
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")


def plot(results, path):
    """Fig. 10 as a PNG: grouped bars of normalized runtime per workload."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = [n for n, _ in results]
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(names) + 2), 3.6))
    width = 0.8 / len(DESIGNS)
    for i, d in enumerate(DESIGNS):
        ax.bar([k + i * width for k in range(len(names))],
               [r["designs"][d]["normalized"] or 0 for _, r in results], width, label=d)
    ax.set_xticks([k + width * (len(DESIGNS) - 1) / 2 for k in range(len(names))])
    ax.set_xticklabels(names, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("runtime / x86")
    ax.set_title("cairn sim: normalized runtime (WHISPER Fig. 10)", fontsize=10)
    ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
