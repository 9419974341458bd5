#!/usr/bin/env python3
"""Interleaved pairs of two builds: how docs/PERFORMANCE.md judges a change on this VM, whose speed
moves between minutes by more than most changes do.

    pairs.py [--pairs N] [--seconds S] [--mib M] [--waves W] WHAT BASE [HEAD]

WHAT is one measurement, run by the benchmark that owns it with BENCH_BIN pointing at each build
(benchlib.sh) or, for the load suite, with --bin:

    tokens         scripts/bench/token --targets biz: biz-server's req/s and CPU µs per token, -c8, -c64
    v1, v2         scripts/bench/client --targets cli|v2: up-server's and up-cli's CPU and the wall
                   time per GiB, one M MiB upload per run (the client's own warm-up run first)
    small          scripts/load/run --uploads 64 --waves W --wrk-connections 0: uploads/s, each
                   process's CPU seconds, context switches per upload
    scale-tokens   scripts/bench/scale --targets tokens (biz-server on PostgreSQL)
    scale-uploads  scripts/bench/scale --targets uploads (v1 and v2 into SeaweedFS)
    scale-small    the load of `small` through the cluster (PostgreSQL + SeaweedFS, one instance each)

BASE and HEAD are each a git revision (built once with `swift build -c release` in a temporary
worktree; the binaries are kept in .build/pairs/<commit>) or a directory holding release binaries
(up-server, biz-server, up-cli). HEAD defaults to this checkout's release build, built first.

Pair i runs BASE then HEAD when i is odd and HEAD then BASE when it is even, so a drift of the
machine during the run weighs on both sides alike. The report (stdout) gives every run's figures,
then per figure both medians, HEAD's change against BASE, and in how many pairs HEAD was better.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

import harness as h

# Figures that describe the run rather than measure the build (the file's size).
SETTINGS = {"client.mib", "big.mib"}

MEASUREMENTS = ("tokens", "v1", "v2", "small", "scale-tokens", "scale-uploads", "scale-small")


def say(message):
    print(f"bench/pairs: {message}", file=sys.stderr, flush=True)


def die(message):
    say(message)
    sys.exit(1)


def has_binaries(directory):
    return all(os.access(os.path.join(directory, p), os.X_OK) for p in h.PRODUCTS)


def build_revision(revision):
    """The release binaries of `revision`, built once in a temporary worktree and kept in
    .build/pairs/<commit> (with biz-server's resource bundle, which it looks for beside itself)."""
    commit = subprocess.run(["git", "rev-parse", "--verify", f"{revision}^{{commit}}"], cwd=h.ROOT,
                            capture_output=True, text=True)
    if commit.returncode != 0:
        die(f"'{revision}' is neither a directory of binaries nor a git revision")
    commit = commit.stdout.strip()
    kept = os.path.join(h.ROOT, ".build", "pairs", commit[:12])
    if has_binaries(kept):
        say(f"{revision}: the binaries kept in {kept}")
        return kept
    source = tempfile.mkdtemp(prefix="upgate-pairs-src.")
    say(f"{revision}: building {commit[:12]} in {source} (a release build: several minutes)")
    subprocess.run(["git", "worktree", "add", "--detach", "--force", source, commit], cwd=h.ROOT, check=True,
                   stdout=sys.stderr, stderr=sys.stderr)
    try:
        bin_path = h.build_release(source)
        staging = kept + ".partial"
        shutil.rmtree(staging, ignore_errors=True)
        os.makedirs(staging)
        for name in os.listdir(bin_path):
            path = os.path.join(bin_path, name)
            if name in h.PRODUCTS:
                shutil.copy2(path, staging)
            elif name.endswith(".resources") and os.path.isdir(path):
                shutil.copytree(path, os.path.join(staging, name))
        os.replace(staging, kept)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", source], cwd=h.ROOT, stdout=sys.stderr,
                       stderr=sys.stderr)
        shutil.rmtree(source, ignore_errors=True)
    return kept


def resolve(side):
    """A directory of binaries for BASE or HEAD (None: this checkout, built now)."""
    if side is None:
        say("HEAD: this checkout's release build")
        return h.build_release()
    if os.path.isdir(side):
        path = os.path.abspath(side)
        if not has_binaries(path):
            die(f"{path} lacks one of {', '.join(h.PRODUCTS)}")
        return path
    return build_revision(side)


def command(what, bins, args):
    """The command line and environment of one run of `what` against `bins`."""
    env = dict(os.environ, BENCH_BIN=bins)
    load = ["scripts/load/run", "--uploads", "64", "--waves", str(args.waves), "--wrk-connections", "0", "--bin", bins]
    if what == "tokens":
        return ["scripts/bench/token", "--targets", "biz"], dict(env, BENCH_SECONDS=str(args.seconds))
    if what in ("v1", "v2"):
        return (["scripts/bench/client", "--targets", "cli" if what == "v1" else "v2"],
                dict(env, BENCH_SIZE_MIB=str(args.mib), BENCH_REPEAT="1", BENCH_LOAD_WAIT="0"))
    if what == "scale-tokens":
        return ["scripts/bench/scale", "--targets", "tokens"], dict(env, BENCH_SECONDS=str(args.seconds))
    if what == "scale-uploads":
        return (["scripts/bench/scale", "--targets", "uploads"],
                dict(env, BENCH_SIZE_MIB=str(args.mib), BENCH_REPEAT="1"))
    if what == "small":
        return load, env
    return load[:1] + ["--cluster", "--instances", "1"] + load[1:], env


def load_figures(text):
    """The load suite's figures from its output: uploads/s from its PASS line, each process's CPU
    seconds and context switches per upload."""
    figures = {}
    passed = re.findall(r"load: PASS.*?(\d+) uploads/s", text)
    if not passed:
        return None
    figures["uploads_s"] = float(passed[-1])
    for label, suffix in (("CPU seconds", "cpu_s"), ("context switches", "switches_per_upload")):
        line = re.findall(rf"^\s*{label}\s+(.*)$", text, re.MULTILINE)
        if line:
            for part in re.sub(r" \(.*$| per upload.*$", "", line[-1]).split(", "):
                name, _, value = part.rpartition(" ")
                try:
                    figures[f"{name}.{suffix}"] = float(value)
                except ValueError:
                    pass
    return figures


def run_once(what, label, bins, args, work, index):
    """One run; returns {figure: value}. A failed run stops the whole comparison."""
    argv, env = command(what, bins, args)
    figures_file = os.path.join(work, f"figures-{index}-{label}")
    env["BENCH_FIGURES"] = figures_file
    log = os.path.join(work, f"run-{index}-{label}.log")
    with open(log, "w") as out:
        status = subprocess.run(argv, cwd=h.ROOT, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    text = open(log).read()
    if status != 0:
        sys.stderr.write(text[-3000:])
        die(f"{label}: {' '.join(argv)} failed ({status}); its output is above")
    if what in ("small", "scale-small"):
        figures = load_figures(text)
        if figures is None:
            die(f"{label}: the load suite printed no PASS line with uploads/s (log: {log})")
        return figures
    figures = {}
    if os.path.exists(figures_file):
        for line in open(figures_file):
            name, _, value = line.strip().partition(" ")
            try:
                if name not in SETTINGS:
                    figures[name] = float(value)
            except ValueError:
                pass
    if not figures:
        die(f"{label}: no figures written (log: {log})")
    return figures


def higher_is_better(name):
    """req/s (`token.biz.c64`, `scale.token.c64`) and uploads/s grow with speed; CPU, time and
    switches (`token.biz.server_us.c64` among them) shrink."""
    return name.endswith("uploads_s") or bool(re.fullmatch(r"(token\.biz|scale\.token)\.c\d+", name))


def report(what, base, head, runs, pairs):
    print(f"## bench/pairs {what}: {pairs} interleaved pairs")
    print(f"BASE = {base}\nHEAD = {head}\n")
    for i, (first, second) in enumerate(runs, 1):
        for label, figures in (first, second):
            print(f"pair {i} {label}: " + ", ".join(f"{k} {v:g}" for k, v in sorted(figures.items())))
    print("\n| figure | BASE median (range) | HEAD median (range) | HEAD vs BASE | HEAD better in |")
    print("|---|---:|---:|---:|---:|")
    names = sorted(set().union(*(f.keys() for pair in runs for _, f in pair)))
    for name in names:
        values = {"BASE": [], "HEAD": []}
        wins = counted = 0
        for pair in runs:
            by = {label: figures.get(name) for label, figures in pair}
            for label in values:
                if by[label] is not None:
                    values[label].append(by[label])
            if by["BASE"] is not None and by["HEAD"] is not None and by["BASE"] != by["HEAD"]:
                counted += 1
                wins += (by["HEAD"] > by["BASE"]) == higher_is_better(name)
        if not values["BASE"] or not values["HEAD"]:
            continue
        a, b = statistics.median(values["BASE"]), statistics.median(values["HEAD"])
        change = f"{(b - a) / a * 100:+.1f} %" if a else "–"
        cells = [f"{statistics.median(v):g} ({min(v):g}–{max(v):g})" for v in (values["BASE"], values["HEAD"])]
        print(f"| {name} ({'higher' if higher_is_better(name) else 'lower'} is better) | {cells[0]} | {cells[1]} "
              f"| {change} | {wins} of {counted} |")
    print("\nA change this VM can show moves the medians and wins most pairs; one that wins half of"
          " them is inside the noise (docs/PERFORMANCE.md).")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=MEASUREMENTS)
    ap.add_argument("base", help="a git revision or a directory of release binaries")
    ap.add_argument("head", nargs="?", help="the same (default: this checkout's release build)")
    ap.add_argument("--pairs", type=int, default=5, help="pairs of runs (default 5)")
    ap.add_argument("--seconds", type=int, default=6, help="wrk's seconds per token run (default 6)")
    ap.add_argument("--mib", type=int, default=1024, help="the upload's size in MiB (default 1024)")
    ap.add_argument("--waves", type=int, default=10, help="waves of 64 small uploads per run (default 10)")
    args = ap.parse_args()
    if args.pairs < 1 or args.seconds < 1 or args.mib < 1 or args.waves < 1:
        die("--pairs, --seconds, --mib and --waves must be positive")
    base = resolve(args.base)
    head = resolve(args.head)
    if os.path.realpath(base) == os.path.realpath(head):
        die("BASE and HEAD are the same binaries")
    work = tempfile.mkdtemp(prefix="upgate-pairs.")
    say(f"runs' logs in {work}")
    runs = []
    for i in range(1, args.pairs + 1):
        order = [("BASE", base), ("HEAD", head)]
        if i % 2 == 0:
            order.reverse()
        pair = []
        for label, bins in order:
            figures = run_once(args.what, label, bins, args, work, i)
            say(f"pair {i} {label}: " + ", ".join(f"{k} {v:g}" for k, v in sorted(figures.items())))
            pair.append((label, figures))
        runs.append(pair)
    report(args.what, f"{args.base} ({base})", f"{args.head or 'this checkout'} ({head})", runs, args.pairs)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
