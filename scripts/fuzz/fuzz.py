#!/usr/bin/env python3
"""Malformed-request fuzzer and live security checks for a running up-server and biz-server.

Started by scripts/fuzz/run, which starts the servers; this writes a JSON report (--out) with
the tallies scripts/fuzz/verdict.py judges, together with the servers' logs (a 5xx is judged by
what the server logged for its request id). Raw sockets only, bounded in requests, time and
concurrency.
"""
import argparse
import collections
import json
import os
import random
import re
import select
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import generators as g
import identity
import rawhttp
import security
from rawhttp import CLOSED, HANG, REFUSED

# 505 is the right answer to a request line whose version is not HTTP/1.0 or 1.1 (libmicrohttpd
# gives it); only for such request lines is it expected.
HTTP1 = (b"HTTP/1.1", b"HTTP/1.0")
REQID = re.compile(rb"(?im)^x-reqid:\s*(\S+)")
KEPT_5XX = 20000  # 5xx answers kept with their request id for the verdict (beyond: a failure)


def is_505_to_http1(status, data):
    """A 505 to a request line that does say HTTP/1.x (the only 505 that is wrong)."""
    if status != 505:
        return False
    first = (data if isinstance(data, bytes) else b"".join(data)).split(b"\n", 1)[0].rstrip(b"\r")
    return first.endswith(HTTP1)


def alive(pid):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    # A zombie still answers kill 0: look at its state.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def healthy(port, timeout=10.0):
    status, _ = rawhttp.simple(port, "GET", "/healthz", timeout=timeout)
    return status == 200


class Tally:
    def __init__(self, name):
        self.name = name
        self.lock = threading.Lock()
        self.requests = 0
        self.outcomes = collections.Counter()
        self.statuses = collections.Counter()
        self.families = collections.Counter()
        self.family_statuses = collections.defaultdict(collections.Counter)
        self.server_errors = []  # every 5xx: status, request id, family, request (the first KEPT_5XX)
        self.server_error_count = 0
        self.hangs = []
        self.auth_bypass = []
        self.undocumented = []  # answers outside their family's documented set (identity.DOCUMENTED)
        self.crashed = False
        self.crash_context = []
        self.recent = collections.deque(maxlen=20)
        self.slowest = 0.0

    def add(self, label, data, result):
        with self.lock:
            self.requests += 1
            self.families[label] += 1
            self.outcomes[result.outcome] += 1
            self.slowest = max(self.slowest, result.elapsed)
            self.recent.append((label, data[:300] if isinstance(data, bytes) else b"".join(data)[:300]))
            self.family_statuses[label][result.status if result.status is not None else result.outcome] += 1
            if result.status is not None:
                self.statuses[result.status] += 1
                if 500 <= result.status <= 599:
                    self.server_error_count += 1
                    if len(self.server_errors) < KEPT_5XX:
                        m = REQID.search(result.head)
                        self.server_errors.append({
                            "status": result.status, "reqid": m.group(1).decode(errors="replace") if m else None,
                            "wrong_505": is_505_to_http1(result.status, data), "family": label,
                            "request": _show(data), "response": _show(result.head)})
            if label.startswith("token-refuse/") and result.status is not None and 200 <= result.status < 300:
                self.auth_bypass.append({"family": label, "request": _show(data), "response": _show(result.head)})
            allowed = identity.DOCUMENTED.get(label)
            if allowed is not None and result.status is not None and result.status not in allowed \
                    and not 500 <= result.status <= 599:  # 5xx are judged by the log (verdict.py)
                self.undocumented.append({"family": label, "status": result.status, "request": _show(data),
                                          "response": _show(result.head)})
            if result.outcome == HANG:
                self.hangs.append({"family": label, "request": _show(data), "seconds": round(result.elapsed, 1)})

    def report(self):
        return {
            "server": self.name, "requests": self.requests, "outcomes": dict(self.outcomes),
            "statuses": dict(sorted(self.statuses.items())), "families": dict(sorted(self.families.items())),
            "family_statuses": {f: dict(sorted(c.items(), key=str)) for f, c in sorted(self.family_statuses.items())},
            "server_errors": self.server_errors, "server_error_count": self.server_error_count,
            "auth_bypass": len(self.auth_bypass), "auth_bypass_samples": self.auth_bypass[:10],
            "undocumented": len(self.undocumented), "undocumented_samples": self.undocumented[:10],
            "hangs": len(self.hangs), "hang_samples": self.hangs[:10], "crashed": self.crashed,
            "crash_context": self.crash_context, "slowest_seconds": round(self.slowest, 2),
        }


def _show(data, limit=600):
    if isinstance(data, list):
        data = b"".join(data)
    text = repr(data[:limit])
    return text + (f" ... ({len(data)} bytes)" if len(data) > limit else "")


def slowloris(port, seconds, stop, tally):
    """One connection sending a valid request one byte a second, for at most `seconds`.

    The servers run with a request-head deadline shorter than `seconds` (scripts/fuzz/run), so
    each such connection must end "closed-by-server"; "ended" means it outlived the deadline,
    "not-connected" that it never reached the server: every one attempted is counted.
    """
    data = rawhttp.request("POST", "/v1/uptoken", [("Content-Type", "application/json")], b"{}" * 8)
    started = time.monotonic()
    with tally.lock:
        tally.outcomes["slowloris-attempted"] += 1
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    except OSError:
        with tally.lock:
            tally.outcomes["slowloris-not-connected"] += 1
        return
    closed_by_server = False
    try:
        for byte in data:
            if stop.is_set() or time.monotonic() - started > seconds:
                break
            try:
                sock.sendall(bytes([byte]))
                # Wait the second out watching for the server's close (EOF, a reset, or an answer).
                readable, _, _ = select.select([sock], [], [], 1.0)
                if readable:
                    sock.recv(4096)
                    closed_by_server = True
                    break
            except OSError:
                closed_by_server = True
                break
    finally:
        sock.close()
    with tally.lock:
        tally.outcomes["slowloris-" + ("closed-by-server" if closed_by_server else "ended")] += 1


def fuzz(name, port, pid, families, count, seconds, workers, seed, c, slow_seconds, slow_connections):
    tally = Tally(name)
    stop = threading.Event()
    deadline = time.monotonic() + seconds
    counter = iter(range(count))
    counter_lock = threading.Lock()

    def worker(index):
        rng = random.Random(seed * 1000 + index)
        while not stop.is_set() and time.monotonic() < deadline:
            with counter_lock:
                if next(counter, None) is None:
                    return
            gen = g.pick(rng, families)
            data, complete, label = gen(rng, c)
            result = rawhttp.exchange(port, data, complete=complete)
            if result.outcome == REFUSED or (result.outcome in (CLOSED, HANG) and not alive(pid)):
                if not alive(pid):
                    with tally.lock:
                        if not tally.crashed:
                            tally.crashed = True
                            tally.crash_context = [{"family": f, "request": _show(d)} for f, d in tally.recent]
                            tally.crash_context.append({"family": label, "request": _show(data)})
                    stop.set()
                    return
            tally.add(label, data, result)
            if result.outcome == HANG and not healthy(port, timeout=10):
                with tally.lock:
                    tally.outcomes["unhealthy-after-hang"] += 1

    slow = [threading.Thread(target=slowloris, args=(port, slow_seconds, stop, tally), daemon=True)
            for _ in range(slow_connections)]
    for t in slow:
        t.start()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(worker, range(workers)))
    stop.set()
    for t in slow:
        t.join(timeout=slow_seconds + 5)
    report = tally.report()
    report["slowloris_connections"] = slow_connections
    report["healthy_after"] = alive(pid) and healthy(port, timeout=10)
    if not report["healthy_after"] and not tally.crashed:
        report["hangs"] += 1
        report["hang_samples"].append({"family": "healthz after the run", "request": "GET /healthz", "seconds": 10})
    return report


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--up-port", type=int, required=True)
    ap.add_argument("--up-pid", type=int, required=True)
    ap.add_argument("--biz-port", type=int, required=True)
    ap.add_argument("--biz-pid", type=int, required=True)
    ap.add_argument("--other-api-key", required=True)
    ap.add_argument("--requests", type=int, default=5000, help="per server")
    ap.add_argument("--seconds", type=float, default=20, help="time bound per server")
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("--slow-seconds", type=float, default=5)
    ap.add_argument("--slow-connections", type=int, default=2)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--marker", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    c = g.Context()
    c.marker = args.marker
    c.biz_host = f"127.0.0.1:{args.biz_port}"
    report = {"seed": args.seed}
    report["setup"] = security.setup(args.up_port, args.biz_port, c)
    report["security"] = security.security_checks(args.up_port, args.biz_port, c.biz_host, args.other_api_key)
    report["servers"] = [
        fuzz("up-server", args.up_port, args.up_pid, g.UP_FAMILIES, args.requests, args.seconds, args.workers,
             args.seed, c, args.slow_seconds, args.slow_connections),
        fuzz("biz-server", args.biz_port, args.biz_pid, g.BIZ_FAMILIES + identity.FAMILIES, args.requests, args.seconds, args.workers,
             args.seed + 1, c, args.slow_seconds, args.slow_connections),
    ]
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    for s in report["security"]:
        print(f"fuzz: security {'ok  ' if s['ok'] else 'FAIL'} {s['check']}" + ("" if s["ok"] else f" ({s['detail']})"))
    for s in report["servers"]:
        print(f"fuzz: {s['server']}: {s['requests']} requests, outcomes {s['outcomes']}, statuses {s['statuses']}, "
              f"slowest {s['slowest_seconds']} s")


if __name__ == "__main__":
    main()
