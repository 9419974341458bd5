"""load: N concurrent small uploads through the whole chain while wrk hammers biz-server's token
endpoint (issue 5, suite 7).

biz-server and up-server run on loopback (release build unless --bin). biz-server's rate limit is
lifted in its temp config (the demo client's 10/s would make wrk and the wave measure 429s).
up-server keeps the deployed callback timeout (5 s) with short outbox retry delays.

Each wave: N threads (one per upload, so all N are in flight at once) each
  1. fetch their own token from biz-server `POST /v1/uptoken` (API key dev-api-key, the key,
     fsize and a traceId of their own), all released together by a barrier;
  2. wait for every token of the wave (a second barrier), then upload 4–64 KiB of random bytes,
     alternately as a form upload (`POST /` multipart, with crc32) or v1 (`mkblk` with the first
     half + `bput` with the rest, then `mkfile`), on a fresh keep-alive connection;
  3. up-server stores the object, calls biz-server back (signed), biz-server records it and its
     answer (the record) is relayed to the client: the reply must be that record (id, key, hash,
     traceId, clientId demo).
wrk (-t2, --wrk-connections keep-alive, scripts/load/uptoken.lua) runs against /v1/uptoken from
1 s before the first wave until every wave is done and at least --wrk-seconds have passed; the
waves start evenly spread over that time, so callbacks arrive all through it while biz-server is
under wrk. `--wrk-connections 0` runs the waves without wrk (for comparison).

Checks: N connections held open at once to each server (wrk's on top) all answer /healthz;
every token 200; every upload 200 with its record relayed (no refused/reset connection,
no 579); biz-server lists exactly one record per upload (none twice, none extra) with the right
hash; biz-server's metrics count N accepted callbacks and no duplicate; up-server made no failed
callback attempt and its outbox has nothing pending or failed; wrk got no non-2xx answer other
than 429 and no connect error. Prints latency percentiles (token fetch, upload end to end incl.
the callback; each server's own handling time per route from its access log), throughput, wrk's
req/s, latency and statuses, and the CPU seconds of each process; then one summary line. Exit 1
on any failed check. Every wait is bounded (--timeout per request, barriers, joins, wrk).
"""
import argparse
import base64
import hashlib
import http.client
import json
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zlib

import chaoslib as lib

SUITE = "load"
HERE = os.path.dirname(os.path.abspath(__file__))


def percentiles(values):
    """'p50 a / p90 b / p99 c / max d ms' of seconds (or '-' when empty)."""
    if not values:
        return "-"
    s = sorted(values)

    def at(p):
        return s[min(len(s) - 1, max(0, int(round(p / 100 * len(s) + 0.5)) - 1))]
    return " / ".join(f"{name} {v * 1000:.0f}" for name, v in
                      (("p50", at(50)), ("p90", at(90)), ("p99", at(99)), ("max", s[-1]))) + " ms"


def etag(data):
    """qiniu-protocol.md §7.1 for one block (≤ 4 MiB): urlsafe-b64(0x16 + SHA-1)."""
    return base64.urlsafe_b64encode(b"\x16" + hashlib.sha1(data).digest()).decode()


def b64(text):
    return base64.urlsafe_b64encode(text.encode()).decode()


class Upload:
    def __init__(self, wave, i, seed, rnd):
        self.wave, self.i = wave, i
        self.method = "form" if i % 2 == 0 else "v1"
        self.size = rnd.randint(4 << 10, 64 << 10)
        self.data = rnd.randbytes(self.size)
        self.etag = etag(self.data)
        self.key = f"demo/load/{seed}-w{wave}-{i}.bin"
        self.trace = f"load-{seed}-w{wave}-{i}"
        self.token_s = self.upload_s = None
        self.token_status = self.status = None
        self.reply = None
        self.error = ""  # why it failed ("" if it did not)


def request(conn, method, path, body, headers):
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    return response.status, response.read()


def fetch_token(u, biz_port, timeout):
    body = json.dumps({"key": u.key, "fsize": u.size, "traceId": u.trace}).encode()
    conn = http.client.HTTPConnection("127.0.0.1", biz_port, timeout=timeout)
    started = time.monotonic()
    try:
        status, reply = request(conn, "POST", "/v1/uptoken", body, {
            "Authorization": "Bearer " + lib.API_KEY, "Content-Type": "application/json"})
    except (OSError, http.client.HTTPException) as e:
        u.error = f"token: {type(e).__name__}"
        return None
    finally:
        conn.close()
    u.token_s, u.token_status = time.monotonic() - started, status
    if status != 200:
        u.error = f"token: HTTP {status} {reply[:80]!r}"
        return None
    return json.loads(reply)["uptoken"]


def form_body(u, token):
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in (("token", token), ("key", u.key), ("crc32", str(zlib.crc32(u.data)))):
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{u.i}.bin"\r\n'
                 f"Content-Type: application/octet-stream\r\n\r\n".encode() + u.data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), "multipart/form-data; boundary=" + boundary


def upload(u, token, up_port, timeout):
    """Form or v1 upload on one keep-alive connection; sets u.status / u.reply / u.error."""
    conn = http.client.HTTPConnection("127.0.0.1", up_port, timeout=timeout)
    auth = {"Authorization": "UpToken " + token, "Content-Type": "application/octet-stream"}
    started = time.monotonic()
    try:
        if u.method == "form":
            body, content_type = form_body(u, token)
            status, reply = request(conn, "POST", "/", body, {"Content-Type": content_type})
        else:
            half = u.size // 2
            status, reply = request(conn, "POST", f"/mkblk/{u.size}", u.data[:half], auth)
            if status == 200:
                block = json.loads(reply)
                status, reply = request(conn, "POST", f"/bput/{block['ctx']}/{block['offset']}", u.data[half:], auth)
            if status == 200:
                block = json.loads(reply)
                if block.get("offset") != u.size or block.get("crc32") != zlib.crc32(u.data[half:]):
                    u.error = f"bput answered {reply[:120]!r}"
                    return
                status, reply = request(conn, "POST", f"/mkfile/{u.size}/key/{b64(u.key)}", block["ctx"].encode(),
                                        dict(auth, **{"Content-Type": "text/plain"}))
    except (OSError, http.client.HTTPException) as e:
        u.error = f"upload: {type(e).__name__}"
        return
    finally:
        conn.close()
    u.upload_s, u.status = time.monotonic() - started, status
    if status != 200:
        u.error = f"upload: HTTP {status} {reply[:120]!r}"
        return
    try:
        u.reply = json.loads(reply)
    except ValueError:
        u.error = f"upload: reply is not JSON {reply[:120]!r}"
        return
    want = {"key": u.key, "hash": u.etag, "fsize": u.size, "traceId": u.trace, "clientId": "demo"}
    wrong = {k: u.reply.get(k) for k, v in want.items() if u.reply.get(k) != v}
    if wrong or not u.reply.get("id"):
        u.error = f"upload: reply is not the callback's record ({wrong or 'no id'})"


def run_wave(wave, uploads, biz, up, args):
    """All uploads of one wave, one thread each; returns (seconds of the upload phase, peak in flight)."""
    n = len(uploads)
    go, tokens_in = threading.Barrier(n + 1), threading.Barrier(n + 1)
    lock = threading.Lock()
    state = {"in_flight": 0, "peak": 0}

    def one(u):
        try:
            go.wait(timeout=60)
        except threading.BrokenBarrierError:
            u.error = "start barrier broken"
            return
        token = fetch_token(u, biz.port, args.timeout)
        try:
            tokens_in.wait(timeout=args.timeout + 30)
        except threading.BrokenBarrierError:
            pass  # upload anyway: someone's token fetch hung; it is reported
        if token is None:
            return
        with lock:
            state["in_flight"] += 1
            state["peak"] = max(state["peak"], state["in_flight"])
        try:
            upload(u, token, up.port, args.timeout)
        finally:
            with lock:
                state["in_flight"] -= 1

    threads = [threading.Thread(target=one, args=(u,), daemon=True) for u in uploads]
    for t in threads:
        t.start()
    go.wait(timeout=60)
    try:
        tokens_in.wait(timeout=args.timeout + 30)
    except threading.BrokenBarrierError:
        pass
    t0 = time.monotonic()
    deadline = t0 + 2 * args.timeout + 30
    for t in threads:
        t.join(timeout=max(0.1, deadline - time.monotonic()))
    hung = sum(t.is_alive() for t in threads)
    elapsed = time.monotonic() - t0
    for u in uploads:
        if not u.error and u.status is None:
            u.error = "did not finish"
    return elapsed, state["peak"], hung


def hold_connections(port, n, timeout=30):
    """Opens n connections to 127.0.0.1:port and keeps them all open, then sends GET /healthz on
    each; returns how many answered 200 (a refused, reset or dropped connection does not)."""
    import socket
    socks, ok = [], 0
    deadline = time.monotonic() + timeout
    try:
        for _ in range(n):
            try:
                socks.append(socket.create_connection(("127.0.0.1", port), timeout=timeout))
            except OSError:
                pass
        for s in socks:
            try:
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            except OSError:
                pass
        for s in socks:
            try:
                s.settimeout(max(0.1, deadline - time.monotonic()))
                ok += s.recv(64).startswith(b"HTTP/1.1 200")
            except OSError:
                pass
    finally:
        for s in socks:
            s.close()
    return ok


def parse_wrk(text):
    out = {"status": {}}
    for line in text.splitlines():
        parts = line.split()
        if not parts or parts[0] != "load-wrk":
            continue
        if parts[1] == "requests":
            out["requests"] = int(parts[2])
        elif parts[1] == "duration_us":
            out["seconds"] = int(parts[2]) / 1e6
        elif parts[1] == "errors":
            out["errors"] = {k: int(v) for k, v in (p.split("=") for p in parts[2:])}
        elif parts[1] == "latency_us":
            out[parts[2]] = int(parts[3]) / 1e3  # ms
        elif parts[1] == "status":
            out["status"][int(parts[2])] = int(parts[3])
    return out


def log_durations(path):
    """{route: [seconds]} from the access-log lines (JSON) of a server log; a route is the path's
    first segment ("/mkblk", "/v1/callback" for /v1/...), "/" for the form upload."""
    routes = {}
    try:
        with open(path, "rb") as f:
            for raw in f:
                if b'"msg":"request"' not in raw:
                    continue
                try:
                    line = json.loads(raw)
                    parts = line["path"].split("/")
                    route = "/".join(parts[:3]) if parts[1:2] == ["v1"] else "/" + parts[1]
                    routes.setdefault(route, []).append(float(line["duration_ms"]) / 1000)
                except (ValueError, KeyError, TypeError, IndexError):
                    pass
    except OSError:
        pass
    return routes


def cpu_seconds(pid):
    """user + system CPU seconds of a live process (None if it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def raise_nofile(want):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        soft = min(want, hard) if hard != resource.RLIM_INFINITY else want
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    return soft


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--short", action="store_true", help="1 wave of 100 uploads, wrk >= 10 s (default: 3 x 500, >= 30 s)")
    ap.add_argument("--bin", help="directory of up-server, biz-server (default: release build)")
    ap.add_argument("--uploads", type=int, help="uploads per wave, all in flight at once")
    ap.add_argument("--waves", type=int)
    ap.add_argument("--wrk-seconds", type=int, help="wrk runs at least this long, and until every wave is done")
    ap.add_argument("--wrk-connections", type=int, default=64)
    ap.add_argument("--timeout", type=float, default=60, help="per HTTP request of the wave (s)")
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    n = args.uploads or (100 if args.short else 500)
    waves = args.waves or (1 if args.short else 3)
    wrk_min = args.wrk_seconds or (10 if args.short else 30)
    lib.install_cleanup()
    nofile = raise_nofile(4 * n + 1024)  # inherited by the servers and wrk
    if nofile < 2 * n + 256:
        print(f"load: ulimit -n is {nofile} (hard limit); {n} uploads at once need about {2 * n + 256}",
              file=sys.stderr)
        return 2
    bins = lib.bin_dir(args.bin)
    work = tempfile.mkdtemp(prefix="upgate-load-")
    rnd = random.Random(args.seed)
    started = time.time()
    checks, extra, wrk = [], "", None
    lib.log(SUITE, f"seed {args.seed}, {waves} x {n} uploads, wrk -c{args.wrk_connections} >= {wrk_min} s, "
                   f"ulimit -n {nofile}, bin {bins}, work {work}")
    try:
        up = lib.Server("up-server", os.path.join(bins, "up-server"),
                        lib.up_config(work, retry_base=1, retry_max=2, timeout=5),
                        lib.free_port(), os.path.join(work, "up"), os.path.join(work, "up-server.log")).start()
        biz = lib.Server("biz-server", os.path.join(bins, "biz-server"), lib.biz_config(work, 10**9, 10**9),
                         lib.free_port(), os.path.join(work, "biz"), os.path.join(work, "biz-server.log"),
                         env={"UPGATE_UP_HOSTS": up.url}).start()
        all_waves = [[Upload(w, i, args.seed, rnd) for i in range(n)] for w in range(waves)]

        use_wrk = args.wrk_connections > 0
        wrk_out = open(os.path.join(work, "wrk.txt"), "w+")
        if use_wrk:
            env = dict(lib.CLEAN_ENV, LOAD_WRK_API_KEY=lib.API_KEY)
            wrk = subprocess.Popen(
                ["wrk", "-t2", f"-c{args.wrk_connections}", "-d3600s", "--timeout", "10s",
                 "-s", os.path.join(HERE, "uptoken.lua"), biz.url + "/v1/uptoken"],
                stdout=wrk_out, stderr=subprocess.STDOUT, env=env)
            lib._children.append(wrk)
            wrk_t0 = time.monotonic()
            time.sleep(1)  # biz-server under wrk before the first token of the wave
            if wrk.poll() is not None:
                raise RuntimeError(f"wrk exited early ({wrk.returncode})")

        # Capacity first, while wrk holds its own connections to biz-server.
        held = {name: hold_connections(server.port, n) for name, server in (("up-server", up), ("biz-server", biz))}
        checks.append((f"{n} connections held open at once (wrk's on top), each answered: "
                       + ", ".join(f"{k} {v}/{n}" for k, v in held.items()), all(v == n for v in held.values())))
        wave_figures = []
        t_waves = time.monotonic()
        for w, uploads in enumerate(all_waves):
            # Waves spread over wrk's minimum time, so callbacks arrive all through it.
            while use_wrk and time.monotonic() < t_waves + w * wrk_min / waves:
                time.sleep(0.05)
            seconds, peak, hung = run_wave(w, uploads, biz, up, args)
            ok = sum(1 for u in uploads if not u.error)
            wave_figures.append((seconds, peak))
            lib.log(SUITE, f"wave {w + 1}/{waves}: {ok}/{n} ok, uploads took {seconds:.2f} s "
                           f"({n / seconds:.0f} uploads/s), peak {peak} in flight, {hung} threads hung")
        wrk_cpu = None
        if use_wrk:
            while time.monotonic() - wrk_t0 < wrk_min + 1:
                time.sleep(0.1)
            wrk_cpu = cpu_seconds(wrk.pid)
            wrk.send_signal(signal.SIGINT)  # wrk stops and reports on SIGINT
            try:
                wrk.wait(timeout=30)
            except subprocess.TimeoutExpired:
                wrk.kill()
                wrk.wait()
        wrk_out.seek(0)
        wrk_text = wrk_out.read()
        wrk_out.close()
        figures = parse_wrk(wrk_text)
        if use_wrk and "requests" not in figures:
            raise RuntimeError("could not parse wrk's output:\n" + wrk_text[-2000:])

        uploads = [u for wave in all_waves for u in wave]
        total = len(uploads)
        by_key = {u.key: u for u in uploads}
        # Every callback was synchronous, so nothing should be left in the outbox; bounded wait anyway.
        deadline, pending = time.time() + 30, None
        while time.time() < deadline:
            pending = lib.outbox(up.url, "pending")
            if pending is not None and not pending.get("items"):
                break
            time.sleep(0.25)
        failed_box = lib.outbox(up.url, "failed")
        records = lib.biz_records(biz.url)
        records = records if records is not None else []
        counts = {}
        for r in records:
            counts[r["key"]] = counts.get(r["key"], 0) + 1
        missing = [k for k in by_key if k not in counts]
        twice = [k for k, c in counts.items() if c > 1]
        extra_records = [k for k in counts if k not in by_key]
        wrong_hash = [r["key"] for r in records if r["key"] in by_key and r["hash"] != by_key[r["key"]].etag]
        ids = {(r["id"], r["key"]) for r in records}
        relayed_id = [u.key for u in uploads if u.reply and (u.reply.get("id"), u.key) not in ids]

        token_bad = [u for u in uploads if u.token_status != 200]
        failures = [u for u in uploads if u.error]
        kinds = {}
        for u in failures:
            kind = u.error.split(" b'")[0][:60]
            kinds[kind] = kinds.get(kind, 0) + 1
        got579 = sum(1 for u in uploads if u.status == 579)
        accepted = lib.metric(biz.url, "upgate_biz_callbacks_accepted_total")
        duplicate = lib.metric(biz.url, "upgate_biz_callbacks_duplicate_total")
        rejected = lib.metric(biz.url, "upgate_biz_callbacks_rejected_total")
        attempts = lib.metric(up.url, "upgate_up_callback_attempts_total")
        cb_failures = lib.metric(up.url, "upgate_up_callback_failures_total")
        cpu = {"up-server": cpu_seconds(up.process.pid), "biz-server": cpu_seconds(biz.process.pid)}
        up.stop()
        biz.stop()
        client_cpu = resource.getrusage(resource.RUSAGE_SELF)
        cpu["client"] = client_cpu.ru_utime + client_cpu.ru_stime
        cpu["wrk"] = wrk_cpu
        biz_routes = log_durations(os.path.join(work, "biz-server.log"))
        up_routes = log_durations(os.path.join(work, "up-server.log"))

        statuses = figures["status"]
        non2xx = {s: c for s, c in statuses.items() if not 200 <= s < 300 and s != 429}
        wrk_errors = figures.get("errors", {})
        rps = figures["requests"] / figures["seconds"] if figures.get("seconds") else 0
        upload_seconds = sum(s for s, _ in wave_figures)
        form = [u for u in uploads if u.method == "form"]
        v1 = [u for u in uploads if u.method == "v1"]
        nbytes = sum(u.size for u in uploads)

        def say(text):
            print(text, flush=True)
        say(f"load: {waves} wave(s) x {n} uploads ({len(form)} form, {len(v1)} v1 mkblk+bput+mkfile), 4-64 KiB, "
            f"{nbytes / 2**20:.1f} MiB; all {n} of a wave in flight at once (peak {max(p for _, p in wave_figures)}); "
            f"{'release' if '/release' in bins else 'debug' if '/debug' in bins else bins} binaries, seed {args.seed}")
        say(f"  token fetch           {percentiles([u.token_s for u in uploads if u.token_s is not None])}"
            f"   ({n} at once per wave)")
        say(f"  upload end to end     {percentiles([u.upload_s for u in uploads if u.upload_s is not None])}"
            f"   (incl. callback; form {percentiles([u.upload_s for u in form if u.upload_s is not None])};"
            f" v1 {percentiles([u.upload_s for u in v1 if u.upload_s is not None])})")
        say(f"  throughput            {total / upload_seconds:.0f} uploads/s, {nbytes / 2**20 / upload_seconds:.1f} MiB/s "
            f"(upload phase of each wave: {', '.join(f'{s:.2f} s' for s, _ in wave_figures)})")
        say(f"  biz-server handling   /v1/callback {percentiles(biz_routes.get('/v1/callback', []))};"
            f" /v1/uptoken {percentiles(biz_routes.get('/v1/uptoken', []))}   (access log duration_ms)")
        say("  up-server handling    " + "; ".join(f"{'form' if r == '/' else r} {percentiles(up_routes[r])}"
                                              for r in ("/", "/mkblk", "/bput", "/mkfile") if r in up_routes))
        if use_wrk:
            say(f"  wrk /v1/uptoken       {rps:.0f} req/s over {figures.get('seconds', 0):.1f} s, -t2 "
                f"-c{args.wrk_connections}; p50 {figures.get('p50', 0):.2f} / p90 {figures.get('p90', 0):.2f} / "
                f"p99 {figures.get('p99', 0):.2f} / max {figures.get('max', 0):.2f} ms; statuses "
                f"{dict(sorted(statuses.items()))}; socket errors {wrk_errors}")
        say("  CPU seconds           " + ", ".join(f"{k} {v:.1f}" for k, v in cpu.items() if v is not None)
            + f" ({os.cpu_count()} cores)")
        if failures:
            say(f"  failures: {kinds}")
            for u in failures[:5]:
                say(f"    {u.key} {u.method}: {u.error}")

        checks += [
            (f"every token fetch answered 200 ({len(token_bad)} not)", not token_bad),
            (f"every upload answered 200 with its callback record relayed ({len(failures)} failed: {kinds})",
             not failures),
            (f"no upload got 579 (callback failed or timed out) ({got579})", got579 == 0),
            (f"biz-server has exactly {total} records for the run ({len(missing)} missing, {len(extra_records)} "
             f"unexpected, {len(records)} listed)", not missing and not extra_records and len(records) == total),
            (f"no upload recorded twice ({len(twice)})", not twice),
            (f"every record carries the object's hash ({len(wrong_hash)} wrong)", not wrong_hash),
            (f"every relayed reply is the listed record ({len(relayed_id)} not)", not relayed_id),
            (f"biz-server metrics: {accepted} accepted, {duplicate} duplicate, {rejected} rejected callbacks",
             accepted == total and duplicate == 0 and rejected == 0),
            (f"up-server: {attempts} callback attempts, {cb_failures} failed", attempts == total and cb_failures == 0),
            ("up-server outbox: nothing pending or failed", pending is not None and not pending.get("items")
             and failed_box is not None and not failed_box.get("items")),
        ]
        if use_wrk:
            checks.append((f"wrk: no non-2xx answer but 429 ({non2xx}), no connect error ({wrk_errors.get('connect')})",
                           not non2xx and wrk_errors.get("connect", 1) == 0 and figures["requests"] > 0))
        ok_count = total - len(failures)
        p = sorted(u.upload_s for u in uploads if u.upload_s is not None)
        extra = (f"{ok_count}/{total} uploads recorded once ({waves}x{n} at once), "
                 f"upload p99 {p[min(len(p) - 1, int(0.99 * len(p)))] * 1000:.0f} ms, "
                 f"{total / upload_seconds:.0f} uploads/s"
                 + (f"; wrk {rps:.0f} req/s p99 {figures.get('p99', 0):.1f} ms" if use_wrk else "; no wrk")
                 if p else f"0/{total} uploads")
    except Exception as e:
        import traceback
        traceback.print_exc()
        checks.append((f"harness error: {e!r}", False))
    finally:
        if wrk is not None and wrk.poll() is None:
            wrk.kill()
    return lib.finish(SUITE, checks, extra, started, args.seed, work, args.keep)


if __name__ == "__main__":
    sys.exit(main())
