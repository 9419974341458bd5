#!/usr/bin/env python3
"""scripts/bench/scale's measurements: issue 14's token and upload rows on the configuration past
one machine, PostgreSQL 15 + SeaweedFS as the S3 store (harness.cluster: one up-server, one
biz-server, both on them), run with the scripts/pyenv venv and scripts/lib on PYTHONPATH.

Both servers are reached directly (not through the cluster's nginx), so a figure differs from
its SQLite + local-disk twin by the stores alone.

    scale.py [--targets tokens,uploads] --seconds S --mib N --repeat R --cli PATH [--bin DIR] [--figures FILE]
             [--payload-integrity sha256|crc32]

  tokens   wrk -t2 -c64 keep-alive, scripts/bench/post.lua (the token bench's request), against
           biz-server on PostgreSQL with its rate limit lifted, after a 1 s warm-up; biz-server's
           and PostgreSQL's CPU per request. Any non-2xx answer refuses the run.
  v1, v2   `up-cli put FILE --protocol v1|v2 --concurrency 4 --no-checkpoint --json` of an N MiB
           random file into up-server on PostgreSQL + S3, R runs each: up-cli's CPU (GNU time),
           up-server's, SeaweedFS's and PostgreSQL's CPU per GiB, wall time per GiB. Every run
           is checked: the client's hash == the official SDK's etag of the file, and GET /stat
           says the same size and hash.

--payload-integrity sets up-server's blobStore.payloadIntegrity; without it the endpoint's
default applies (SeaweedFS is reached over http here, so SHA-256 in the signature).

Prints a report to stderr and, with --figures, appends "NAME VALUE" lines for scripts/bench/run
(scale.token.c64, scale.{cli,v2}.{server,client,store,postgres}_cpu_gib, scale.{cli,v2}.wall_gib).
Everything listens on 127.0.0.1; the cluster (and every process it started) is stopped by pid.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import harness as h
from harness.cluster import Cluster

GIB = 1 << 30


def say(message):
    print(f"bench/scale: {message}", file=sys.stderr, flush=True)


def die(message):
    say(message)
    sys.exit(1)


class Meter:
    """CPU seconds of biz-server, up-server, SeaweedFS and PostgreSQL between two moments."""

    def __init__(self, cluster):
        self.cluster = cluster
        self.pids = {"biz": cluster.bizs[0].process.pid, "up": cluster.ups[0].process.pid,
                     "store": cluster.s3["pid"]}

    def read(self):
        now = {name: h.cpu_seconds(pid) for name, pid in self.pids.items()}
        now["postgres"] = h.postgres_cpu_seconds(self.cluster.pg_dir)
        missing = [name for name, value in now.items() if value is None]
        if missing:
            die(f"cannot read the CPU time of {', '.join(missing)} (exited?)")
        return now

    @staticmethod
    def spent(before, after):
        return {name: after[name] - before[name] for name in before}


def wrk(url, seconds, out_path):
    """One wrk run (the token bench's request); its report text."""
    env = dict(os.environ, BENCH_BODY='{"key":"demo/bench.bin","fsize":1048576}', BENCH_API_KEY=h.API_KEY)
    command = ["wrk", "-t2", "-c64", f"-d{seconds}s", "--latency", "-s", "scripts/bench/post.lua", url]
    with open(out_path, "w") as out:
        subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, env=env, check=True, timeout=seconds + 30)
    return open(out_path).read()


def tokens(cluster, meter, args, work, figures):
    url = cluster.bizs[0].url + "/v1/uptoken"
    wrk(url, 1, os.path.join(work, "wrk-warmup.txt"))
    before = meter.read()
    text = wrk(url, args.seconds, os.path.join(work, "wrk.txt"))
    spent = Meter.spent(before, meter.read())
    rps = requests = None
    for line in text.splitlines():
        if line.startswith("Requests/sec:"):
            rps = float(line.split()[1])
        elif " requests in " in line:
            requests = int(line.split()[0])
        elif "Non-2xx or 3xx responses:" in line:
            die(f"biz-server answered {line.split()[-1]} non-2xx responses: a run of 429s or 401s measures nothing\n{text}")
        elif line.strip().startswith("Socket errors:"):
            say(f"warning: wrk: {line.strip()}")
    if not rps or not requests:
        die(f"could not parse wrk's output:\n{text}")
    biz_us, pg_us = (spent[k] / requests * 1e6 for k in ("biz", "postgres"))
    say(f"tokens: {rps:,.0f} req/s over {args.seconds} s at 64 connections; CPU per request: biz-server "
        f"{biz_us:.1f} µs, PostgreSQL {pg_us:.1f} µs")
    figures.append(("scale.token.c64", f"{rps:.0f}"))
    figures.append(("scale.token.biz_us", f"{biz_us:.1f}"))
    figures.append(("scale.token.postgres_us", f"{pg_us:.1f}"))


def gnu_time(path):
    """(user + system CPU seconds, peak RSS KiB) from a `/usr/bin/time -v` report."""
    fields = {}
    for line in open(path):
        name, _, value = line.strip().rpartition(": ")
        fields[name] = value
    return float(fields["User time (seconds)"]) + float(fields["System time (seconds)"]), \
        int(fields["Maximum resident set size (kbytes)"])


def upload(cluster, meter, args, work, path, etag, protocol, run):
    """One up-cli put; {name: CPU seconds} plus wall and client, all checked against the SDK."""
    key = f"bench/scale-{protocol}-{run}-{os.getpid()}.bin"
    token = h.upload_token(key)
    report, events = os.path.join(work, f"{protocol}-{run}.time"), os.path.join(work, f"{protocol}-{run}.jsonl")
    before = meter.read()
    started = time.monotonic()
    with open(events, "w") as out, open(os.path.join(work, f"{protocol}-{run}.err"), "w") as err:
        status = subprocess.run(["/usr/bin/time", "-v", "-o", report, args.cli, "put", path, "--key", key,
                                 "--token", token, "--up-host", cluster.ups[0].url, "--concurrency", "4",
                                 "--protocol", protocol, "--no-checkpoint", "--json"],
                                stdout=out, stderr=err, timeout=1800).returncode
    wall = time.monotonic() - started
    spent = Meter.spent(before, meter.read())
    if status != 0:
        die(f"up-cli put ({protocol}) exited with {status}; see {work}")
    done = [event for event in map(json.loads, open(events)) if event.get("event") == "done"]
    if not done or done[-1].get("hash") != etag:
        die(f"up-cli put ({protocol}): hash {done[-1].get('hash') if done else None} != the SDK's etag {etag}")
    code, stat = h.stat(cluster.ups[0].url, key)
    if code != 200 or stat.get("hash") != etag or stat.get("fsize") != os.path.getsize(path):
        die(f"stat of {key}: {code} {stat}, expected fsize {os.path.getsize(path)} hash {etag}")
    spent["client"], rss = gnu_time(report)
    spent["wall"] = wall
    say(f"{protocol} run {run}: {wall:.2f} s; CPU s: up-cli {spent['client']:.2f} (peak RSS {rss / 1024:.1f} MiB), "
        f"up-server {spent['up']:.2f}, SeaweedFS {spent['store']:.2f}, PostgreSQL {spent['postgres']:.2f}")
    return spent


def uploads(cluster, meter, args, work, figures):
    path = os.path.join(work, "source.bin")
    with open(path, "wb") as f:
        for _ in range(args.mib):
            f.write(os.urandom(1 << 20))
    etag = h.etag(path)
    per_gib = GIB / os.path.getsize(path)
    for protocol, name in (("v1", "cli"), ("v2", "v2")):
        runs = [upload(cluster, meter, args, work, path, etag, protocol, run) for run in range(1, args.repeat + 1)]
        for field, key in (("up", "server"), ("client", "client"), ("store", "store"), ("postgres", "postgres")):
            figures.append((f"scale.{name}.{key}_cpu_gib", f"{statistics.median(r[field] for r in runs) * per_gib:.2f}"))
        figures.append((f"scale.{name}.wall_gib", f"{statistics.median(r['wall'] for r in runs) * per_gib:.2f}"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--targets", default="tokens,uploads", help="tokens, uploads or both (comma-separated)")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cli", required=True, help="the up-cli binary")
    ap.add_argument("--bin", help="directory of up-server and biz-server (default: the release build)")
    ap.add_argument("--figures", help="append NAME VALUE lines here (scripts/bench/run)")
    ap.add_argument("--payload-integrity", choices=["sha256", "crc32"],
                    help="up-server's blobStore.payloadIntegrity (default: the endpoint's, sha256 over http)")
    args = ap.parse_args()
    if min(args.seconds, args.mib, args.repeat) < 1:
        ap.error("--seconds, --mib and --repeat must be positive")
    targets = set(args.targets.split(","))
    if not targets or targets - {"tokens", "uploads"}:
        ap.error(f"unknown targets in {args.targets!r} (tokens, uploads)")
    h.install_cleanup()
    work = tempfile.mkdtemp(prefix="upgate-bench-scale-")

    def lift(config):   # the token bench's setting: a limited client would measure 429s
        config["rateLimit"] = {"tokensPerSecond": 10 ** 9, "burst": 10 ** 9}
    def payload(config):
        if args.payload_integrity:
            config["blobStore"]["payloadIntegrity"] = args.payload_integrity
    cluster = Cluster(h.bin_dir(args.bin), work, ups=1, bizs=1, up_change=payload, biz_change=lift)
    figures, finished = [], False
    try:
        cluster.start()
        say(f"PostgreSQL {cluster.pg_url}, SeaweedFS {cluster.s3['endpoint']}, up-server {cluster.ups[0].url}, "
            f"biz-server {cluster.bizs[0].url} (started in {cluster.seconds_to_start:.1f} s); "
            f"blob payloads protected by {args.payload_integrity or 'the default for http (sha256)'}")
        meter = Meter(cluster)
        if "tokens" in targets:
            tokens(cluster, meter, args, work, figures)
        if "uploads" in targets:
            uploads(cluster, meter, args, work, figures)
        finished = True
    finally:
        cluster.stop()
        if finished:
            shutil.rmtree(work, ignore_errors=True)
        else:
            say(f"configs and logs kept in {work}")
    for name, value in figures:
        print(f"{name} {value}")
    if args.figures:
        with open(args.figures, "a") as f:
            f.writelines(f"{name} {value}\n" for name, value in figures)


if __name__ == "__main__":
    main()
