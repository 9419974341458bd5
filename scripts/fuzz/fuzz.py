#!/usr/bin/env python3
"""Malformed-request fuzzer and live security checks for a running up-server and biz-server.

Started by scripts/fuzz/run, which starts the servers; this writes a JSON report (--out) with
the tallies the driver sums up. Raw sockets only, bounded in requests, time and concurrency.
"""
import argparse
import collections
import json
import os
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import generators as g
import qiniu
import rawhttp
from rawhttp import ANSWERED, CLOSED, HANG, REFUSED, WAITED

# 5xx the servers may legitimately answer: 503 (store unavailable), 579 (stored, callback
# failed), 599 (internal error, documented). Anything else (500 above all) is unexpected.
DOCUMENTED_5XX = {503, 579, 599}
# 505 is the right answer to a request line whose version is not HTTP/1.0 or 1.1 (libmicrohttpd
# gives it); only for such request lines is it expected.
HTTP1 = (b"HTTP/1.1", b"HTTP/1.0")


def unexpected_5xx(status, data):
    if not 500 <= status <= 599 or status in DOCUMENTED_5XX:
        return False
    if status == 505:
        first = (data if isinstance(data, bytes) else b"".join(data)).split(b"\n", 1)[0].rstrip(b"\r")
        return first.endswith(HTTP1)
    return True


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
        self.unexpected_5xx = []
        self.hangs = []
        self.auth_bypass = []
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
                if unexpected_5xx(result.status, data):
                    if len(self.unexpected_5xx) < 20:
                        self.unexpected_5xx.append({"family": label, "request": _show(data), "response": _show(result.head)})
                    else:
                        self.unexpected_5xx.append(None)
            if label.startswith("token-refuse/") and result.status is not None and 200 <= result.status < 300:
                self.auth_bypass.append({"family": label, "request": _show(data), "response": _show(result.head)})
            if result.outcome == HANG:
                self.hangs.append({"family": label, "request": _show(data), "seconds": round(result.elapsed, 1)})

    def report(self):
        return {
            "server": self.name, "requests": self.requests, "outcomes": dict(self.outcomes),
            "statuses": dict(sorted(self.statuses.items())), "families": dict(sorted(self.families.items())),
            "family_statuses": {f: dict(sorted(c.items(), key=str)) for f, c in sorted(self.family_statuses.items())},
            "unexpected_5xx": len(self.unexpected_5xx), "unexpected_5xx_samples": [x for x in self.unexpected_5xx if x],
            "auth_bypass": len(self.auth_bypass), "auth_bypass_samples": self.auth_bypass[:10],
            "hangs": len(self.hangs), "hang_samples": self.hangs[:10], "crashed": self.crashed,
            "crash_context": self.crash_context, "slowest_seconds": round(self.slowest, 2),
        }


def _show(data, limit=600):
    if isinstance(data, list):
        data = b"".join(data)
    text = repr(data[:limit])
    return text + (f" ... ({len(data)} bytes)" if len(data) > limit else "")


# --- setup: valid material from the live servers -----------------------------------------------

def setup(up, biz, c):
    tok = g.good_token(scope="demo")
    auth = [("Authorization", "UpToken " + tok)]
    for i in range(4):
        status, body = rawhttp.simple(up, "POST", "/mkblk/4", auth, bytes([65 + i]) * 4)
        if status == 200:
            c.ctx.append(json.loads(body)["ctx"])
        status, body = rawhttp.simple(up, "POST", "/mkblk/8", auth, b"open")
        if status == 200:
            c.open_ctx.append(json.loads(body)["ctx"])
        enc = qiniu.b64(f"demo/v2-{i}")
        status, body = rawhttp.simple(up, "POST", f"/buckets/demo/objects/{enc}/uploads", auth)
        if status == 200:
            uid = json.loads(body)["uploadId"]
            c.upload_ids.append((enc, uid))
            status, body = rawhttp.simple(up, "PUT", f"/buckets/demo/objects/{enc}/uploads/{uid}/1",
                                          auth + [("Content-Type", "application/octet-stream")], b"part")
            if status == 200:
                c.part_etags.append(json.loads(body)["etag"])
    body = b"bucket=demo&key=demo%2Fsetup&hash=Fsetup&fsize=4&clientId=demo&x%3Aapp=v"
    status, reply = rawhttp.simple(biz, "POST", "/v1/callback", [
        ("Authorization", qiniu.qbox_authorization("/v1/callback", body)),
        ("Content-Type", "application/x-www-form-urlencoded")], body)
    if status == 200:
        c.record_ids.append(json.loads(reply)["id"])
    return {"ctx": len(c.ctx), "open_ctx": len(c.open_ctx), "upload_ids": len(c.upload_ids), "record_ids": len(c.record_ids)}


# --- live security checks ----------------------------------------------------------------------

def security_checks(up, biz, biz_host, other_api_key):
    results = []

    def check(name, ok, detail=""):
        results.append({"check": name, "ok": bool(ok), "detail": detail})

    now = int(time.time())
    bad_tokens = {
        "expired": qiniu.token({"scope": "demo", "deadline": now - 10}),
        "tampered policy": (lambda t: t[0] + ":" + t[1] + ":" + qiniu.b64(json.dumps({"scope": "demo", "deadline": now + 9999999})))(
            qiniu.token().split(":")),
        "foreign AK": qiniu.token(ak="foreign-ak", sk="foreign-sk"),
        "right AK, wrong SK": qiniu.token(sk="not-the-secret"),
    }
    scoped = qiniu.token({"scope": "demo:demo/allowed", "deadline": now + 3600})
    tok = qiniu.token()
    status, body = rawhttp.simple(up, "POST", "/mkblk/4", [("Authorization", "UpToken " + tok)], b"abcd")
    ctx = json.loads(body)["ctx"] if status == 200 else "x"
    key = qiniu.b64("demo/other")

    def form(token, k="demo/other"):
        boundary = "sec"
        parts = [("token", token), ("key", k)]
        data = b"".join(f'--{boundary}\r\nContent-Disposition: form-data; name="{n}"\r\n\r\n{v}\r\n'.encode() for n, v in parts)
        data += f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="f"\r\n\r\nabcd\r\n--{boundary}--\r\n'.encode()
        return rawhttp.simple(up, "POST", "/", [("Content-Type", f"multipart/form-data; boundary={boundary}")], data)[0]

    def v1(token):
        return [rawhttp.simple(up, "POST", "/mkblk/4", [("Authorization", "UpToken " + token)], b"abcd")[0],
                rawhttp.simple(up, "POST", f"/mkfile/4/key/{key}", [("Authorization", "UpToken " + token)], ctx.encode())[0],
                rawhttp.simple(up, "POST", f"/put/4/key/{key}", [("Authorization", "UpToken " + token)], b"abcd")[0]]

    def v2(token):
        return rawhttp.simple(up, "POST", f"/buckets/demo/objects/{key}/uploads", [("Authorization", "UpToken " + token)])[0]

    for name, t in bad_tokens.items():
        statuses = [form(t)] + v1(t) + [v2(t)]
        check(f"up-server: {name} token refused on form, mkblk, mkfile, put, v2 init (401)", all(s == 401 for s in statuses),
              f"statuses {statuses}")
    statuses = [form(scoped)] + v1(scoped)[1:] + [v2(scoped)]
    check("up-server: wrong-scope token refused on form, mkfile, put, v2 init (403)", all(s == 403 for s in statuses),
          f"statuses {statuses}")
    forged = ctx[:-4] + ("AAAA" if not ctx.endswith("AAAA") else "BBBB")
    statuses = [rawhttp.simple(up, "POST", f"/bput/{forged}/4", [("Authorization", "UpToken " + tok)], b"ab")[0],
                rawhttp.simple(up, "POST", f"/mkfile/4/key/{key}", [("Authorization", "UpToken " + tok)], forged.encode())[0]]
    check("up-server: forged ctx refused on bput and mkfile (701)", statuses == [701, 701], f"statuses {statuses}")

    # biz-server callbacks.
    form_type = "application/x-www-form-urlencoded"
    body = f"bucket=demo&key=demo%2Fsec-{now}&hash=Fsec{now}&fsize=4&clientId=demo".encode()
    good = qiniu.qbox_authorization("/v1/callback", body)

    def callback(auth, b=body, extra=()):
        return rawhttp.simple(biz, "POST", "/v1/callback", [("Authorization", auth), ("Content-Type", form_type)] + list(extra), b,
                              host=biz_host)

    s1, r1 = callback(good)
    s2, r2 = callback(good)
    rows = _count_records(biz, "dev-api-key", f"demo/sec-{now}")
    check("biz-server: replayed callback answers the same record, no second row",
          s1 == 200 and s2 == 200 and r1 == r2 and rows == 1, f"statuses {s1},{s2}, same reply {r1 == r2}, rows {rows}")
    statuses = [callback(qiniu.qbox_authorization("/v1/callback", body, sk="forged"))[0],
                callback(qiniu.qbox_authorization("/v1/callback", body, ak="foreign-ak"))[0],
                callback(good, body + b"&x%3Aevil=1")[0], callback("")[0]]
    check("biz-server: forged, foreign-AK, tampered-body and unsigned callbacks refused (401)", all(s == 401 for s in statuses),
          f"statuses {statuses}")
    stale = "20200101T000000Z"
    auth = qiniu.qiniu_authorization("POST", "/v1/callback", biz_host, form_type, body, [("X-Qiniu-Date", stale)])
    s = callback(auth, extra=[("X-Qiniu-Date", stale)])[0]
    fresh = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    auth = qiniu.qiniu_authorization("POST", "/v1/callback", biz_host, form_type, body, [("X-Qiniu-Date", fresh)])
    s_fresh = callback(auth, extra=[("X-Qiniu-Date", fresh)])[0]
    check("biz-server: stale signed-date callback refused (401), fresh one accepted", s == 401 and s_fresh == 200,
          f"stale {s}, fresh {s_fresh}")

    # The whole chain (token from biz-server, form upload, signed callback up-server -> biz-server,
    # reply relayed) so that every secret has passed through both servers' logs before the grep.
    chain_key = f"demo/chain-{now}"
    s_tok, tok_body = rawhttp.simple(biz, "POST", "/v1/uptoken", [("Authorization", "Bearer dev-api-key"),
                                     ("Content-Type", "application/json")], json.dumps({"key": chain_key, "vars": {"x:color": "red"}}).encode())
    chain_token = json.loads(tok_body)["uptoken"] if s_tok == 200 else "none"
    s_up = form(chain_token, chain_key)
    rows = _count_records(biz, "dev-api-key", chain_key)
    check("full chain: biz token, form upload, callback recorded once", s_tok == 200 and s_up == 200 and rows == 1,
          f"uptoken {s_tok}, upload {s_up}, rows {rows}")

    # Cross-client isolation.
    record_id = json.loads(r1)["id"] if s1 == 200 else "none"
    s_own = rawhttp.simple(biz, "GET", f"/v1/uploads/{record_id}", [("Authorization", "Bearer dev-api-key")])[0]
    s_other = rawhttp.simple(biz, "GET", f"/v1/uploads/{record_id}", [("Authorization", "Bearer " + other_api_key)])[0]
    s_list, listing = rawhttp.simple(biz, "GET", "/v1/uploads?limit=1000", [("Authorization", "Bearer " + other_api_key)])
    leaked = s_list != 200 or any(item.get("clientId") != "other" for item in json.loads(listing).get("items", []))
    check("biz-server: another client's API key cannot read (404) or list a client's upload",
          s_own == 200 and s_other == 404 and not leaked, f"own {s_own}, other {s_other}, list {s_list}, leaked {leaked}")
    return results


def _count_records(biz, api_key, key):
    status, body = rawhttp.simple(biz, "GET", "/v1/uploads?limit=1000", [("Authorization", "Bearer " + api_key)])
    if status != 200:
        return -1
    return sum(1 for item in json.loads(body)["items"] if item.get("key") == key)


# --- fuzzing -----------------------------------------------------------------------------------

def slowloris(port, seconds, stop, tally):
    """One connection sending a valid request one byte a second, for at most `seconds`.

    The servers run with a request-head deadline shorter than `seconds` (scripts/fuzz/run), so
    each such connection must end "closed-by-server"; "ended" means it outlived the deadline.
    """
    import select
    import socket
    data = rawhttp.request("POST", "/v1/uptoken" if port else "/", [("Content-Type", "application/json")], b"{}" * 8)
    started = time.monotonic()
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    except OSError:
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

    slow = [threading.Thread(target=slowloris, args=(port, slow_seconds, stop, tally), daemon=True) for _ in range(slow_connections)]
    for t in slow:
        t.start()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(worker, range(workers)))
    stop.set()
    for t in slow:
        t.join(timeout=slow_seconds + 5)
    report = tally.report()
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
    report["setup"] = setup(args.up_port, args.biz_port, c)
    report["security"] = security_checks(args.up_port, args.biz_port, c.biz_host, args.other_api_key)
    report["servers"] = [
        fuzz("up-server", args.up_port, args.up_pid, g.UP_FAMILIES, args.requests, args.seconds, args.workers, args.seed, c,
             args.slow_seconds, args.slow_connections),
        fuzz("biz-server", args.biz_port, args.biz_pid, g.BIZ_FAMILIES, args.requests, args.seconds, args.workers, args.seed + 1, c,
             args.slow_seconds, args.slow_connections),
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
