"""`cairn trace report`: WHISPER's persistence analysis (section 5) of a
CAIRN_TRACE file: epochs per transaction, epoch sizes, singleton epochs,
self- and cross-thread dependencies, write amplification and where each
byte comes from, non-temporal share, PM against DRAM stores, and the
source lines behind the most epochs and flushes. docs/trace.md has the
definitions; cairn-trace-scan (through cairn.trace_epochs.scan) makes the
epochs and counts them."""
from collections import Counter

from cairn import trace as tr
from cairn import trace_epochs as te

WINDOW_NS = 50_000            # WHISPER: dependencies within 50 us
SIZE_EDGES = [1, 2, 3, 4, 5, 9, 17, 64]                # epoch size buckets, unique lines
TX_EDGES = [0, 1, 2, 3, 4, 5, 6, 8, 11, 21, 51, 101]   # epochs per transaction buckets
TOP = 10


def analyze(t, window_ns=WINDOW_NS, progress=None):
    """The report of trace t as a dict (what --json prints): the counts
    cairn-trace-scan makes in one pass, with the shares, percentiles and
    names worked out here."""
    c = te.scan(t, ["--report", "--window-ns", str(int(window_ns)), "--top", str(TOP)], progress)
    fences = _expand(dict(c["tx_epochs"]))           # committed transactions' fences, sorted
    sizes = dict(c["sizes"])                          # unique lines -> epochs
    n_epochs, singles = c["epochs"], c["singles"]
    self_dep, cross_dep = c["self"], c["cross"]
    written, outside = c["written"], c["outside"]
    epoch_sites = Counter({(s if isinstance(s, str) else int(s)): n for s, n in c["epoch_sites"]})
    flushed_by_site = Counter(dict(c["flushed_by_site"]))
    # a program built with cairn-cc --trace records every store it makes;
    # otherwise the only store events are cairn_ptr_store's, and the bytes
    # its transactions logged stand for what they wrote
    compiled = any(func != "cairn_ptr_store" for _, _, func in t.sites.values())
    user = c["user_bytes"] if compiled else c["declared"]
    extra = {k: v for k, v in written.items() if not k.startswith("heap lines")}
    amp = sum(extra.values()) / user if user else None
    pm_stores, dram_stores = c["pm_stores"], c["dram_stores"]
    nt_lines, flush_lines = c["nt_lines"], c["flush_lines"]

    def site_name(s):
        if isinstance(s, str):
            return f"(runtime: {s})"
        if not s:
            return "(runtime: flush)"
        return t.site_text(s)

    return {
        "trace": {"threads": len(t.chunks), "records": t.records, "complete": t.complete},
        "epoch_definition": "PM lines written by one thread between two of its fences "
                            "(stores, ntstores and flushed lines)",
        "transactions": {
            "committed": len(fences),
            "aborted": c["aborted"],
            "epochs_median": median_or_none(fences),
            "epochs_mean": sum(fences) / len(fences) if fences else None,
            "epochs_min": fences[0] if fences else None,
            "epochs_max": fences[-1] if fences else None,
            "epochs_p90": te.percentile(fences, 90) if fences else None,
            "distribution": _buckets(fences, TX_EDGES),
        },
        "epochs": {
            "count": n_epochs,
            "ended_by_ofence": c["by_fence"][0],
            "ended_by_dfence": c["by_fence"][1],
            "open_at_end": c["by_fence"][2],
            "empty_fences": {"ofence": c["empty"][0], "dfence": c["empty"][1]},
            "size_distribution": _buckets(_expand(sizes), SIZE_EDGES),
            "singleton": singles,
            "singleton_share": singles / n_epochs if n_epochs else None,
            "singleton_bytes": c["single_bytes"],
            "singleton_under_10_bytes": c["single_small"],
            "mean_lines": sum(k * v for k, v in sizes.items()) / n_epochs if n_epochs else None,
        },
        "dependencies": {
            "window_us": window_ns / 1000,
            "self": self_dep,
            "self_share": self_dep / n_epochs if n_epochs else None,
            "cross": cross_dep,
            "cross_share": cross_dep / n_epochs if n_epochs else None,
            "self_by_region": dict(Counter(dict(c["self_by_region"])).most_common()),
            "cross_by_region": dict(Counter(dict(c["cross_by_region"])).most_common()),
        },
        "write_amplification": {
            "user_bytes": user,
            "user_bytes_from": "store events (cairn-cc --trace)" if compiled
                               else "log_append lengths (not built with cairn-cc --trace)",
            "extra_bytes": dict(sorted(extra.items())),
            "other_bytes": {k: v for k, v in written.items() if k.startswith("heap lines")},
            "amplification": amp,
            "outside_transactions": {"user_bytes": c["user_outside"], **dict(sorted(outside.items()))},
        },
        "non_temporal": {
            "lines": nt_lines,
            "flushed_lines": flush_lines,
            "share": nt_lines / (nt_lines + flush_lines) if nt_lines + flush_lines else None,
        },
        "stores": {
            "pm": pm_stores,
            "dram": dram_stores,
            "pm_share": pm_stores / (pm_stores + dram_stores) if compiled and pm_stores + dram_stores
            else None,
        },
        "runtime_events": dict(sorted(c["runtime_events"].items())),
        "top_epoch_sites": [{"site": site_name(s), "epochs": n}
                            for s, n in epoch_sites.most_common(TOP)],
        "top_flushed_sites": [{"site": site_name(s), "flushed_lines": n}
                              for s, n in flushed_by_site.most_common(TOP)],
        "top_flushed_lines": [{"line": _line_text(ln), "region": reg, "flushes": n,
                               "last_store_at": site_name(s) if s is not None else None}
                              for ln, reg, n, s in c["top_flushed_lines"]],
    }


def median_or_none(v):
    return te.median(v) if v else None


def _expand(counter):
    out = []
    for k, c in sorted(counter.items()):
        out.extend([k] * c)
    return out


def _buckets(values, edges):
    """[(label, count, share)] over the buckets of edges, in order."""
    c = Counter(te.bucket(v, edges) for v in values)
    labels = [te.bucket(e, edges) for e in edges]
    n = len(values)
    return [{"bucket": lab, "count": c[lab], "share": c[lab] / n if n else 0.0} for lab in labels]


def _line_text(ln):
    if ln & tr.REL_BIT:
        return f"{(ln >> 40) & tr.ID_MASK}+{ln & tr.OFF_MASK:#x}"
    return f"{ln:#x}"


def _pct(x):
    return "n/a" if x is None else f"{100 * x:.1f}%"


def print_report(r, out, path):
    w = out.write
    tx, ep, dep, wa = r["transactions"], r["epochs"], r["dependencies"], r["write_amplification"]
    w(f"{path}: {r['trace']['records']} records, {r['trace']['threads']} threads"
      f"{'' if r['trace']['complete'] else ' (INCOMPLETE: no END record)'}\n")
    w(f"epoch: {r['epoch_definition']}\n\n")
    w(f"transactions: {tx['committed']} committed, {tx['aborted']} aborted\n")
    if tx["committed"]:
        w(f"  epochs per committed transaction (WHISPER Fig. 3): median {tx['epochs_median']}, "
          f"mean {tx['epochs_mean']:.2f}, min {tx['epochs_min']}, p90 {tx['epochs_p90']}, "
          f"max {tx['epochs_max']}\n")
        _table(w, "epochs", tx["distribution"])
    w(f"\nepochs: {ep['count']} with PM writes ({ep['ended_by_ofence']} ended by ofence, "
      f"{ep['ended_by_dfence']} by dfence, {ep['open_at_end']} open at the end); "
      f"fences with nothing written since the last: {ep['empty_fences']['ofence']} ofence, "
      f"{ep['empty_fences']['dfence']} dfence\n")
    if ep["count"]:
        w(f"  size in unique 64 B lines (WHISPER Fig. 4): mean {ep['mean_lines']:.2f}; "
          f"singletons {ep['singleton']} ({_pct(ep['singleton_share'])}), "
          f"{ep['singleton_bytes']} bytes, {ep['singleton_under_10_bytes']} of them under 10 bytes\n")
        _table(w, "lines", ep["size_distribution"])
    w(f"\ndependencies within {dep['window_us']:g} us (WHISPER Fig. 5): "
      f"self {dep['self']} epochs ({_pct(dep['self_share'])}), "
      f"cross-thread {dep['cross']} ({_pct(dep['cross_share'])})\n")
    for k, name in (("self_by_region", "self"), ("cross_by_region", "cross")):
        if dep[k]:
            w(f"  {name}: " + ", ".join(f"{reg} {c}" for reg, c in dep[k].items()) + "\n")
    w(f"\nwrite amplification in transactions: user bytes {wa['user_bytes']} "
      f"(from {wa['user_bytes_from']})\n")
    for k, v in wa["extra_bytes"].items():
        w(f"  {k:<22} {v:>12.0f} B  {_pct(v / wa['user_bytes']) if wa['user_bytes'] else ''}\n")
    w(f"  {'amplification':<22} {'':>12}    {_pct(wa['amplification'])}\n")
    for k, v in wa["other_bytes"].items():
        w(f"  not counted: {k}: {v:.0f} B\n")
    o = wa["outside_transactions"]
    if any(o.values()):
        w("  outside transactions: " + ", ".join(f"{k} {v:.0f} B" for k, v in o.items()) + "\n")
    nt = r["non_temporal"]
    w(f"\nnon-temporal: {nt['lines']} lines written non-temporally, {nt['flushed_lines']} flushed: "
      f"{_pct(nt['share'])} non-temporal\n")
    st = r["stores"]
    w(f"stores (WHISPER Fig. 6): {st['pm']} to PM, {st['dram']} to DRAM: "
      + (f"{_pct(st['pm_share'])} to PM\n" if st["pm_share"] is not None
         else "n/a (store counts need a program built with cairn-cc --trace)\n"))
    if r["top_epoch_sites"]:
        w("\nepochs by the source line of their first store (or where only the runtime wrote)\n")
        for x in r["top_epoch_sites"]:
            w(f"  {x['epochs']:>10}  {x['site']}\n")
    if r["top_flushed_sites"]:
        w("\nsource lines whose stores are flushed the most (lines)\n")
        for x in r["top_flushed_sites"]:
            w(f"  {x['flushed_lines']:>10}  {x['site']}\n")
    if r["top_flushed_lines"]:
        w("\nmost flushed lines\n")
        for x in r["top_flushed_lines"]:
            at = f"  last stored at {x['last_store_at']}" if x["last_store_at"] else ""
            w(f"  {x['flushes']:>10}  {x['line']:<18} {x['region']}{at}\n")


def _table(w, what, rows):
    w(f"    {what:>8} {'count':>10} {'share':>8}\n")
    for row in rows:
        if row["count"]:
            w(f"    {row['bucket']:>8} {row['count']:>10} {_pct(row['share']):>8}\n")


def plot(r, outdir, name):
    """PNG plots of Figs. 3-6 in outdir; returns the paths written."""
    import os
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(outdir, exist_ok=True)
    paths = []

    def bar(labels, values, title, ylabel, fname, xlabel=None, colors="#4a7ab5"):
        fig, ax = plt.subplots(figsize=(6 if xlabel else 4, 3.2))
        ax.bar(labels, values, color=colors)
        ax.set_title(f"{name}: {title}", fontsize=10)
        if xlabel:
            ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        fig.tight_layout()
        p = os.path.join(outdir, fname)
        fig.savefig(p, dpi=100)
        plt.close(fig)
        paths.append(p)

    def dist(rows, title, xlabel, fname):
        bar([x["bucket"] for x in rows], [100 * x["share"] for x in rows], title, "% of total",
            fname, xlabel)

    two = ["#b5614a", "#4a7ab5"]
    if r["transactions"]["committed"]:
        dist(r["transactions"]["distribution"], "epochs per transaction (Fig. 3)", "epochs",
             "fig3-epochs-per-tx.png")
    if r["epochs"]["count"]:
        dist(r["epochs"]["size_distribution"], "epoch size (Fig. 4)", "unique 64 B lines",
             "fig4-epoch-size.png")
        d = r["dependencies"]
        bar(["self", "cross"], [100 * (d["self_share"] or 0), 100 * (d["cross_share"] or 0)],
            "epochs with dependencies (Fig. 5)", "% of epochs", "fig5-dependencies.png",
            colors=two)
    st = r["stores"]
    if st["pm_share"] is not None:
        bar(["PM", "DRAM"], [100 * st["pm_share"], 100 * (1 - st["pm_share"])],
            "stores (Fig. 6)", "% of stores", "fig6-pm-stores.png", colors=two)
    return paths
