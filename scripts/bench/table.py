#!/usr/bin/env python3
"""scripts/bench/run's report: reads the figures the sub-benchmarks wrote ("NAME VALUE" lines,
benchlib.sh `figure`), prints issue 14's table (each row a ratio against its peer from the same
run, and the goal) as Markdown, and draws the chart of the token rate and the upload CPU per GiB
against their anchors (nginx; the hash floor) with matplotlib.

    table.py FIGURES --command CMD --commit SHA --loads "STEP L1 L5 L15"... --chart PNG
"""
import argparse
import datetime

SMALL_BASELINE = 424   # uploads/s, issue 14's figure on main d2cc844 (load suite): not this run


def read(path):
    figures = {}
    with open(path) as f:
        for line in f:
            name, value = line.split()
            figures[name] = float(value)
    return figures


def rows(f):
    """(what, figure, peer, ratio, goal, met) per row; rows whose figures are missing are left out."""
    out = []

    def row(what, figure, peer, ratio, goal, ok):
        verdict = "" if ok is None else "met" if ok else "MISSED"
        out.append((what, figure, peer, f"**{ratio:.2f}×**", goal, verdict))

    biz, nginx, python, mhd = (f.get(f"token.{t}.c64") for t in ("biz", "nginx", "python", "mhd"))
    if biz and nginx:
        row("`POST /v1/uptoken`, wrk -t2 -c64 keep-alive, vs nginx `return 200` of the same body",
            f"{biz:,.0f} req/s", f"{nginx:,.0f} req/s", biz / nginx, "≥ 0.8×", biz / nginx >= 0.8)
    if biz and python:
        row("same, vs the Python peer (stdlib server + official SDK)",
            f"{biz:,.0f} req/s", f"{python:,.0f} req/s", biz / python, "≥ 10×", biz / python >= 10)
    if mhd and nginx:
        row("the engine alone: libmicrohttpd with NativeHTTP's flags answering the same body, no handler "
            "(`mhd_peer.c`), vs nginx", f"{mhd:,.0f} req/s", f"{nginx:,.0f} req/s", mhd / nginx,
            "none: the most a handler on this engine can reach", None)
    floor, put = f.get("floor.cpu_gib"), f.get("limit.put_gib")
    for proto, label in (("cli", "v1 (4 MiB blocks)"), ("v2", "v2 (4 MiB parts)")):
        if floor is None or f"{proto}.server_cpu_gib" not in f:
            continue
        server, client, wall = (f[f"{proto}.{k}"] for k in ("server_cpu_gib", "client_cpu_gib", "wall_gib"))
        row(f"{label}: up-server CPU per GiB, up-cli → up-server on loopback, vs the hash floor",
            f"{server:.2f} s", f"{floor:.2f} s", server / floor, "≤ 1.5×", server / floor <= 1.5)
        row(f"{label}: up-cli CPU per GiB, vs the same floor",
            f"{client:.2f} s", f"{floor:.2f} s", client / floor, "≤ 1.5×", client / floor <= 1.5)
        own = f.get("floor_v2.cpu_gib") if proto == "v2" else None
        write = f.get("floor_write.cpu_gib")
        if write:   # storing the bytes: the kernel's copy into the page cache and the fsyncs, any server's cost
            hashed = own or floor
            row(f"{label}: up-server CPU per GiB vs {'its own' if own else 'the hash'} floor + the write floor "
                "(the same bytes written to a new file, 4 MiB + fsync at a time)",
                f"{server:.2f} s", f"{hashed + write:.2f} s", server / (hashed + write),
                "≤ 1.5× (not the issue's goal)", server / (hashed + write) <= 1.5)
        if own:   # v2 must verify each part's Content-MD5 instead of a CRC-32: its own floor, for reading
            row(f"{label}: up-server CPU per GiB vs v2's own floor (SHA-1 + MD5, what v2 requires)",
                f"{server:.2f} s", f"{own:.2f} s", server / own, "≤ 1.5× (not the issue's goal)", server / own <= 1.5)
            row(f"{label}: up-cli CPU per GiB vs v2's own floor",
                f"{client:.2f} s", f"{own:.2f} s", client / own, "≤ 1.5× (not the issue's goal)", client / own <= 1.5)
        if put is not None:
            limit = floor + put
            row(f"{label}: wall per GiB vs the limit (hash floor + `curl -T` → nginx, {put:.2f} s)",
                f"{wall:.2f} s", f"{limit:.2f} s", limit / wall, "≥ 0.8×", limit / wall >= 0.8)
    small = f.get("small.uploads_s")
    if small:
        row("many small uploads (64 at once, form and v1, 4–64 KiB, callback + record each; load suite)",
            f"{small:,.0f} uploads/s", f"{SMALL_BASELINE} uploads/s (issue 14, main d2cc844, not this run)",
            small / SMALL_BASELINE, "≥ 2×", small / SMALL_BASELINE >= 2)
    scale_rows(f, row, nginx, python, floor, put)
    rss = f.get("big.rss_mib", f.get("cli.rss_mib"))
    if rss:
        size = f.get("big.mib", f.get("client.mib", 0))
        row(f"memory: up-cli peak RSS, {size / 1024:g} GiB file", f"{rss:.1f} MiB", "64 MiB", rss / 64,
            "≤ 1×", rss <= 64)
    if "up.rss_mib" in f:
        row(f"memory: up-server VmHWM, {f['up.concurrent']:.0f} concurrent uploads", f"{f['up.rss_mib']:.1f} MiB",
            "96 MiB", f["up.rss_mib"] / 96, "≤ 1×", f["up.rss_mib"] <= 96)
    return out


def scale_rows(f, row, nginx, python, floor, put):
    """The same rows on PostgreSQL + S3 (scripts/bench/scale, the cluster load), against the same
    peers from this run; the store's own CPU (SeaweedFS, PostgreSQL) is shown beside up-server's."""
    label = "PostgreSQL + S3"
    biz = f.get("scale.token.c64")
    if biz and nginx:
        row(f"{label}: `POST /v1/uptoken` (biz-server on PostgreSQL), vs nginx `return 200`",
            f"{biz:,.0f} req/s", f"{nginx:,.0f} req/s", biz / nginx, "≥ 0.8×", biz / nginx >= 0.8)
    if biz and python:
        row(f"{label}: same, vs the Python peer", f"{biz:,.0f} req/s", f"{python:,.0f} req/s", biz / python,
            "≥ 10×", biz / python >= 10)
    for proto, name in (("cli", "v1"), ("v2", "v2")):
        if floor is None or f"scale.{proto}.server_cpu_gib" not in f:
            continue
        server, client, wall, store, pg = (f[f"scale.{proto}.{k}"] for k in
                                           ("server_cpu_gib", "client_cpu_gib", "wall_gib", "store_cpu_gib",
                                            "postgres_cpu_gib"))
        row(f"{label}, {name}: up-server CPU per GiB vs the hash floor (the store's own CPU in brackets)",
            f"{server:.2f} s (SeaweedFS {store:.2f} s, PostgreSQL {pg:.2f} s)", f"{floor:.2f} s", server / floor,
            "≤ 1.5×", server / floor <= 1.5)
        row(f"{label}, {name}: up-cli CPU per GiB vs the hash floor", f"{client:.2f} s", f"{floor:.2f} s",
            client / floor, "≤ 1.5×", client / floor <= 1.5)
        if put is not None:
            limit = floor + put
            row(f"{label}, {name}: wall per GiB vs the limit (as above)", f"{wall:.2f} s", f"{limit:.2f} s",
                limit / wall, "≥ 0.8×", limit / wall >= 0.8)
    small = f.get("scale.small.uploads_s")
    if small:
        row(f"{label}: many small uploads (as above; one up-server and one biz-server behind nginx)",
            f"{small:,.0f} uploads/s", f"{SMALL_BASELINE} uploads/s (issue 14, SQLite, not this run)",
            small / SMALL_BASELINE, "≥ 2×", small / SMALL_BASELINE >= 2)


def chart(f, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    tokens = [(label, f.get(f"token.{t}.c64"), color) for t, label, color in
              (("biz", "biz-server", "tab:blue"), ("nginx", "nginx return 200\n(anchor)", "tab:gray"),
               ("python", "Python peer", "tab:orange"), ("mhd", "libmicrohttpd\nalone", "tab:purple"))]
    tokens = [bar for bar in tokens if bar[1]]
    a.bar([bar[0] for bar in tokens], [bar[1] for bar in tokens], color=[bar[2] for bar in tokens])
    a.set_title("POST /v1/uptoken, wrk -t2 -c64 (req/s)")
    if f.get("token.nginx.c64"):
        a.axhline(0.8 * f["token.nginx.c64"], color="tab:green", linestyle="--", label="goal: 0.8 × nginx")
        a.legend()
    floor = f.get("floor.cpu_gib")
    labels, values = [], []
    for proto in ("cli", "v2"):
        for side, key in (("up-server", "server_cpu_gib"), ("up-cli", "client_cpu_gib")):
            if f"{proto}.{key}" in f:
                labels.append(f"{side}\n{'v1' if proto == 'cli' else 'v2'}")
                values.append(f[f"{proto}.{key}"])
    b.bar(labels, values, color="tab:blue")
    if floor:
        b.axhline(floor, color="tab:gray", label=f"hash floor {floor:.2f} s (anchor)")
        b.axhline(1.5 * floor, color="tab:green", linestyle="--", label="goal: 1.5 × floor")
        lines = [floor]
        if f.get("floor_write.cpu_gib"):
            lines.append(floor + f["floor_write.cpu_gib"])
            b.axhline(lines[-1], color="tab:red", linestyle=":", label=f"hash + write floor {lines[-1]:.2f} s")
        # Room above the tallest bar or line, so the legend never covers one.
        b.set_ylim(top=1.45 * max(values + lines))
        b.legend(loc="upper left")
    b.set_title("CPU seconds per GiB uploaded")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("figures")
    ap.add_argument("--command", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--loads", nargs="*", default=[])
    ap.add_argument("--chart")
    args = ap.parse_args()
    f = read(args.figures)
    print(f"## scripts/bench/run — {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC\n")
    print(f"command: `{args.command}`; commit: {args.commit}; release builds, 2 shared cores")
    print("load average (1/5/15 min) before each step: " + "; ".join(args.loads) + "\n")
    print("| what | figure | peer (same run) | ratio | goal | |")
    print("|---|---:|---:|---:|---|---|")
    for r in rows(f):
        print("| " + " | ".join(r) + " |")
    if args.chart:
        chart(f, args.chart)
        print(f"\nchart: {args.chart}")


if __name__ == "__main__":
    main()
