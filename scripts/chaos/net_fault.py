"""net-fault: a loopback TCP proxy between up-cli and up-server that delays, resets mid-body,
truncates and stalls connections (v1, v2 and form uploads).

up-cli's upload host (`--up-host`) is the proxy; biz-server (tokens) and the callbacks stay
direct. The proxy adds `Connection: close` to every request, so one connection carries one
request and each request draws its own fate from a seeded RNG: pass through (most), or one fault:
  delay              latency on every 64 KiB piece both ways, kept under the client's timeout
  reset              RST (SO_LINGER 0) on both sides after N request bytes (head or body)
  truncate-request   the client side closed after N request bytes; up-server sees EOF mid-body
  truncate-response  the whole request forwarded, up-server answered (the work is done), and
                     the client gets only the first N bytes of the reply
  stall-request      forwarding stops after N request bytes for longer than the client's timeout
  stall-response     the reply is held for longer than the client's timeout, then dropped
A request gets a fault with probability --rate (0.4); the requests that finish an upload (mkfile,
v2 complete, form) with at least 0.6, mostly lost replies, since a reply lost after the object was
stored is where a retry could store it twice or record it twice. The first faults cycle through
every kind (each is injected at least once), the rest are drawn by weight. up-cli runs with a short `--timeout` and its own `--retries`; when it still exits with a
retryable error (network, 408/429, retryable 5xx) the same command runs again from its
checkpoint (counted and printed). Checks: every upload finishes; up-cli's hash = `up-cli etag`
= up-server's stat; the download equals the file; exactly one biz-server record per upload, with
the file's hash; no checkpoint left; the outbox drained; up-server alive and its log free of
errors (network faults are the clients' doing); and, read from
up-server's index, every stored object is one of the suite's uploads with the
right hash and size (nothing else, nothing corrupt). Printed: faults by kind and by request,
re-runs, request body bytes forwarded minus the file sizes ("re-sent").
"""
import argparse
import collections
import os
import random
import re
import signal
import socket
import sqlite3
import struct
import subprocess
import sys
import tempfile
import threading
import time

import chaoslib as lib

SUITE = "net-fault"
KINDS = ("delay", "reset", "truncate-request", "truncate-response", "stall-request", "stall-response")
PIECE = 64 << 10
# Statuses RetryPolicy retries (qiniu-protocol.md §8): 408, 429, and 5xx/6xx except these.
FINAL = {501, 509, 573, 579, 608, 612, 614, 616, 618, 630, 631, 632, 640, 701}


def retryable(kind):
    if kind == "network":
        return True
    m = re.fullmatch(r"server (\d+)", kind or "")
    if not m:
        return False
    status = int(m.group(1))
    return status in (408, 429) or (status >= 500 and status not in FINAL)


def request_type(method, path):
    if method == "POST" and path.startswith("/mkblk/"):
        return "mkblk"
    if method == "POST" and path.startswith("/bput/"):
        return "bput"
    if method == "POST" and path.startswith("/mkfile/"):
        return "mkfile"
    if path.startswith("/buckets/"):
        if method == "PUT":
            return "v2-part"
        if method == "DELETE":
            return "v2-abort"
        return "v2-init" if path.split("?")[0].endswith("/uploads") else "v2-complete"
    if method == "POST" and path.split("?")[0] == "/":
        return "form"
    return "other"


DATA_TYPES = {"mkblk", "bput", "v2-part", "form"}
FINISHING = {"mkfile", "v2-complete", "form"}
FINISHING_WEIGHTS = {"delay": 1, "reset": 2, "truncate-request": 1, "truncate-response": 4, "stall-request": 1,
                     "stall-response": 2}


class ClientGone(Exception):
    pass


def _reset(sock):
    """Close with RST rather than FIN."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    sock.close()


def _close(sock):
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


class FaultProxy:
    """127.0.0.1:<port> → 127.0.0.1:<target>, one thread per connection, faults per request."""

    def __init__(self, target_port, seed, rate, timeout, weights):
        self.target_port, self.rate, self.timeout = target_port, rate, timeout
        self.rng = random.Random(seed)
        self.weights = weights
        self.coverage = list(KINDS)
        self.rng.shuffle(self.coverage)
        self.lock = threading.Lock()
        self.faults = collections.Counter()         # kind → count
        self.by_request = collections.Counter()     # (request type, kind) → count
        self.requests = collections.Counter()       # request type → count
        self.data_bytes = 0                         # body bytes of data requests forwarded upstream
        self.errors = []                            # proxy-internal errors (a bug here, not a fault)
        self.stalls_open = 0
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(256)
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.closing = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self):
        self.closing.set()
        try:
            self.listener.close()
        except OSError:
            pass

    def _accept(self):
        while not self.closing.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _plan(self, rtype, head_len, body_len):
        with self.lock:
            self.requests[rtype] += 1
            # The requests that finish an upload (mkfile, v2 complete, form) are few but matter
            # most: a reply lost there means the object is stored and the client must not make
            # a second one (or a second callback record). They get more faults, mostly lost replies.
            finishing = rtype in FINISHING
            if self.rng.random() >= (max(self.rate, 0.6) if finishing else self.rate):
                kind = None
            elif self.coverage:
                kind = self.coverage.pop()
            else:
                weights = FINISHING_WEIGHTS if finishing else self.weights
                kind = self.rng.choices(KINDS, weights=[weights[k] for k in KINDS])[0]
            total = head_len + body_len
            cut = head_len + self.rng.randrange(body_len) if body_len > 0 else self.rng.randrange(head_len)
            if self.rng.random() < 0.1:
                cut = self.rng.randrange(total)  # sometimes inside the head
            plan = {
                "kind": kind,
                "cut": cut,
                "stall": self.timeout + self.rng.uniform(0.5, 2.0),
                "piece_delay": self.rng.uniform(0.001, 0.02),
                "reply_delay": self.rng.uniform(0, self.timeout * 0.2),
                "reply_cut": self.rng.random(),
            }
            # Delays stay well under the client's timeout: at most 40 % of it over the body.
            pieces = max(1, total // PIECE)
            plan["piece_delay"] = min(plan["piece_delay"], self.timeout * 0.4 / pieces)
            if kind:
                self.faults[kind] += 1
                self.by_request[(rtype, kind)] += 1
            return plan

    def _serve(self, client):
        upstream = None
        try:
            client.settimeout(60)
            buf = b""
            while b"\r\n\r\n" not in buf:
                data = client.recv(65536)
                if not data:
                    client.close()
                    return
                buf += data
                if len(buf) > 1 << 20:
                    raise RuntimeError("request head over 1 MiB")
            head, rest = buf.split(b"\r\n\r\n", 1)
            lines = head.decode("latin-1").split("\r\n")
            method, path = lines[0].split(" ")[:2]
            headers = [line for line in lines[1:] if line.split(":", 1)[0].strip().lower() not in ("connection", "keep-alive")]
            body_len = 0
            for line in headers:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    body_len = int(value.strip())
                if name.strip().lower() == "transfer-encoding":
                    raise RuntimeError(f"unexpected Transfer-Encoding in {method} {path}")
            head = ("\r\n".join([lines[0]] + headers + ["Connection: close"]) + "\r\n\r\n").encode("latin-1")
            rtype = request_type(method, path)
            plan = self._plan(rtype, len(head), body_len)
            kind = plan["kind"]
            upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=10)
            upstream.settimeout(60)

            limit = plan["cut"] if kind in ("reset", "truncate-request", "stall-request") else None
            complete = self._forward_request(client, upstream, head, rest, body_len, limit, rtype,
                                             plan["piece_delay"] if kind == "delay" else 0)
            if not complete:
                if kind == "reset":
                    _reset(client)
                    _reset(upstream)
                elif kind == "truncate-request":
                    _close(client)
                    _close(upstream)
                elif kind == "stall-request":
                    self._stall(plan["stall"])
                    _close(client)
                    _close(upstream)
                return
            reply = self._read_reply(upstream)
            _close(upstream)
            upstream = None
            if kind == "truncate-response":
                _close_after(client, reply[:int(plan["reply_cut"] * len(reply))])
                return
            if kind == "stall-response":
                self._stall(plan["stall"])
                _close(client)
                return
            if kind == "delay":
                time.sleep(plan["reply_delay"])
                for o in range(0, len(reply), PIECE):
                    client.sendall(reply[o:o + PIECE])
                    time.sleep(plan["piece_delay"])
            else:
                client.sendall(reply)
            _close(client)
        except ClientGone:
            # The client gave up (its timeout) while we forwarded: drop the upstream side too.
            if upstream:
                _reset(upstream)
            client.close()
        except (ConnectionError, socket.timeout, BrokenPipeError) as e:
            if upstream:
                _reset(upstream)
            client.close()
            if not isinstance(e, (ConnectionResetError, BrokenPipeError)):
                with self.lock:
                    self.errors.append(repr(e))
        except Exception as e:  # a proxy bug: reported, never a silent pass
            with self.lock:
                self.errors.append(repr(e))
            if upstream:
                _reset(upstream)
            client.close()

    def _forward_request(self, client, upstream, head, rest, body_len, limit, rtype, piece_delay):
        """Forwards head + body (at most `limit` bytes in all); True if all of it went."""
        forwarded = 0

        def send(data):
            nonlocal forwarded
            if limit is not None and forwarded + len(data) >= limit:
                data = data[:limit - forwarded]
                upstream.sendall(data)
                forwarded = limit
                return False
            upstream.sendall(data)
            forwarded += len(data)
            return True

        if not send(head):
            return False
        remaining = body_len
        pending = rest[:remaining]
        while True:
            if pending:
                for o in range(0, len(pending), PIECE):
                    before = forwarded
                    ok = send(pending[o:o + PIECE])
                    if rtype in DATA_TYPES:
                        with self.lock:
                            self.data_bytes += forwarded - before
                    if not ok:
                        return False
                    if piece_delay:
                        time.sleep(piece_delay)
                remaining -= len(pending)
            if remaining <= 0:
                return True
            try:
                pending = client.recv(min(256 << 10, remaining))
            except (ConnectionError, socket.timeout):
                raise ClientGone()
            if not pending:
                raise ClientGone()

    def _stall(self, seconds):
        """Holds a connection silent for `seconds` (or until the proxy closes), counted in stalls_open."""
        with self.lock:
            self.stalls_open += 1
        self.closing.wait(seconds)
        with self.lock:
            self.stalls_open -= 1

    @staticmethod
    def _read_reply(upstream):
        """The whole reply: head + Content-Length bytes, or up to EOF."""
        buf = b""
        need = None
        while need is None or len(buf) < need:
            data = upstream.recv(65536)
            if not data:
                break
            buf += data
            if need is None and b"\r\n\r\n" in buf:
                head, _ = buf.split(b"\r\n\r\n", 1)
                m = re.search(rb"(?im)^content-length:\s*(\d+)\s*$", head)
                if m:
                    need = len(head) + 4 + int(m.group(1))
        return buf


def _close_after(client, data):
    try:
        if data:
            client.sendall(data)
    except OSError:
        pass
    _close(client)


# ---------------------------------------------------------------- uploads

class Upload:
    def __init__(self, proto, index, size, key, path):
        self.proto, self.index, self.size, self.key, self.path = proto, index, size, key, path
        self.done, self.local, self.reruns, self.failure, self.hang = None, None, 0, None, False
        self.rerun_reasons = []
        self.stat_ok = self.download_ok = False
        self.checkpoint_left = False
        self.seconds = 0.0


def run_upload(u, args, bins, up, biz, proxy, work):
    cli = os.path.join(bins, "up-cli")
    checkpoint = os.path.join(work, f"{u.proto}-{u.index}.ckpt.json")
    argv = [cli, "put", u.path, "--key", u.key, "--biz", biz.url, "--api-key", lib.API_KEY, "--up-host", proxy.url,
            "--checkpoint", checkpoint, "--protocol", u.proto, "--json", "--timeout", str(args.timeout),
            "--retries", str(args.retries), "--concurrency", str(args.concurrency)]
    if u.proto == "v1":
        argv += ["--chunk-size", str(args.chunk)]
    elif u.proto == "v2":
        argv += ["--part-size", str(args.part)]
    started = time.time()
    u.local = lib.etag_of(cli, u.path)
    for attempt in range(args.max_reruns + 1):
        run = lib.CliRun(argv, os.path.join(work, f"{u.proto}-{u.index}-run{attempt}.jsonl"))
        status = run.wait(timeout=args.hang_seconds)
        if status == -9 and not run.event("done") and not run.event("error"):
            u.hang = True
            u.failure = f"up-cli did not end within {args.hang_seconds} s (killed)"
            break
        done = run.event("done")
        if status == 0 and done:
            u.done = done
            break
        error = run.event("error") or {}
        kind = error.get("kind")
        if retryable(kind):
            u.reruns += 1
            u.rerun_reasons.append(f"{kind}: {(error.get('message') or '')[:160]}")
            continue
        u.failure = f"exit {status}, {kind}: {(error.get('message') or run.stderr_text().strip())[:300]}"
        break
    else:
        u.failure = f"still failing after {args.max_reruns} re-runs: {u.rerun_reasons[-1:]}"
    u.seconds = time.time() - started
    u.checkpoint_left = os.path.exists(checkpoint)
    # Checked against up-server directly (not through the proxy).
    st_status, st = lib.stat(up.url, u.key)
    u.stat_ok = st_status == 200 and st.get("hash") == u.local and st.get("fsize") == u.size
    dl_status, body = lib.download(up.url, u.key)
    with open(u.path, "rb") as f:
        u.download_ok = dl_status == 200 and body == f.read()
    os.remove(u.path)


def stored_objects(data_dir):
    """(key, etag, fsize, segment bytes) of every object in up-server's index, and the outbox states."""
    db = sqlite3.connect(f"file:{os.path.join(data_dir, 'index.sqlite3')}?mode=ro", uri=True)
    try:
        rows = db.execute(
            "SELECT o.object_key, o.etag, o.fsize, COALESCE((SELECT SUM(length) FROM segments s WHERE "
            "s.bucket = o.bucket AND s.object_key = o.object_key), 0) FROM objects o").fetchall()
        # The shared outbox table (issue 9): pending, claimed (being attempted), delivered, dead.
        outbox = dict(db.execute("SELECT state, COUNT(*) FROM callback_outbox GROUP BY state").fetchall())
    finally:
        db.close()
    return rows, outbox


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--short", action="store_true",
                    help="2 x 16 MiB per protocol + 3 form uploads (default: 8 x 64 MiB per protocol + 16 form)")
    ap.add_argument("--bin", help="directory of up-server, biz-server, up-cli (default: release build)")
    ap.add_argument("--uploads", type=int, help="uploads per protocol (v1, v2)")
    ap.add_argument("--size", type=int, help="bytes per v1/v2 upload")
    ap.add_argument("--forms", type=int, help="form uploads (files of 64 KiB-4 MiB)")
    ap.add_argument("--rate", type=float, default=0.4, help="share of requests given a fault (default 0.4)")
    ap.add_argument("--timeout", type=float, help="up-cli --timeout (default 3 short, 4 full)")
    ap.add_argument("--retries", type=int, default=4, help="up-cli --retries (default 4)")
    ap.add_argument("--parallel", type=int, help="uploads at once (default 2 short, 3 full)")
    ap.add_argument("--protocols", default="v1,v2,form")
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
    args.uploads = args.uploads or (2 if args.short else 8)
    args.size = args.size or ((16 if args.short else 64) << 20)
    args.forms = args.forms if args.forms is not None else (3 if args.short else 16)
    args.timeout = args.timeout or (3.0 if args.short else 4.0)
    args.parallel = args.parallel or 3
    # v1 in 1 MiB chunks (4 per block: bput, and 701 after a lost bput reply); v2 in 4 MiB parts
    # (its hash is then the plain etag).
    args.concurrency, args.chunk, args.part = 4, 1 << 20, 4 << 20
    args.max_reruns, args.hang_seconds = 10, (60 if args.short else 300)
    protocols = args.protocols.split(",")
    weights = {"delay": 3, "reset": 3, "truncate-request": 2, "truncate-response": 3, "stall-request": 1,
               "stall-response": 1}

    lib.install_cleanup()
    bins = lib.bin_dir(args.bin)
    work = tempfile.mkdtemp(prefix="upgate-chaos-net-")
    started = time.time()
    checks, totals, notes = [], [], []
    lib.log(SUITE, f"seed {args.seed}, {args.uploads} x {args.size >> 20} MiB per protocol + {args.forms} form, fault "
                   f"rate {args.rate}, up-cli --timeout {args.timeout} --retries {args.retries}, work {work}")
    proxy = None
    try:
        up_data = os.path.join(work, "up")
        up = lib.Server("up-server", os.path.join(bins, "up-server"), lib.up_config(work), lib.free_port(),
                        up_data, os.path.join(work, "up-server.log")).start()
        biz = lib.Server("biz-server", os.path.join(bins, "biz-server"), lib.biz_config(work), lib.free_port(),
                         os.path.join(work, "biz"), os.path.join(work, "biz-server.log"),
                         env={"UPGATE_UP_HOSTS": up.url}).start()
        proxy = FaultProxy(up.port, args.seed, args.rate, args.timeout, weights)
        received_before = lib.metric(up.url, "upgate_up_bytes_received_total") or 0.0

        uploads = []
        rnd = random.Random(args.seed ^ 0x5EED)
        for proto in protocols:
            count = args.forms if proto == "form" else args.uploads
            for i in range(count):
                size = rnd.randint(64 << 10, 4 << 20) if proto == "form" else args.size
                key = f"demo/chaos/net-fault-{args.seed}-{proto}-{i}.bin"
                uploads.append(Upload(proto, i, size, key, os.path.join(work, f"{proto}-{i}.bin")))
        # Interleave protocols so parallel uploads mix them.
        uploads.sort(key=lambda u: (u.index, protocols.index(u.proto)))
        queue = list(uploads)
        qlock = threading.Lock()
        harness_errors = []

        def worker():
            while True:
                with qlock:
                    if not queue:
                        return
                    u = queue.pop(0)
                try:
                    lib.make_file(u.path, u.size, seed=(args.seed * 1000003 + hash(u.key)) & 0xFFFFFFFF)
                    run_upload(u, args, bins, up, biz, proxy, work)
                except Exception as e:
                    harness_errors.append(f"{u.key}: {e!r}")
                    u.failure = u.failure or f"harness: {e!r}"
                lib.log(SUITE, f"{u.proto} #{u.index} ({u.size / 2**20:.1f} MiB): "
                               f"{'ok' if u.done and u.done.get('hash') == u.local else 'FAILED ' + str(u.failure)} "
                               f"in {u.seconds:.1f} s, {u.reruns} re-runs; faults so far {dict(proxy.faults)}")

        threads = [threading.Thread(target=worker, daemon=True) for _ in range(args.parallel)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=max(1, args.hang_seconds * (len(uploads) + 1)))

        # The outbox: every callback delivered (bounded wait; the callbacks went direct).
        lib.log(SUITE, "uploads done; waiting for the outbox")
        deadline = time.time() + 60
        pending = failed = None
        while time.time() < deadline:
            pending, failed = lib.outbox(up.url, "pending"), lib.outbox(up.url, "failed")
            if pending is not None and not pending.get("items") and failed is not None and not failed.get("items"):
                break
            time.sleep(0.5)
        records = lib.biz_records(biz.url) or []
        by_key = collections.defaultdict(list)
        for r in records:
            by_key[r.get("key")].append(r)
        received = (lib.metric(up.url, "upgate_up_bytes_received_total") or 0.0) - received_before
        up_alive = up.alive()
        # Read while up-server runs (SQLite WAL: a reader is fine), then stop it without waiting
        # out its 10 s shutdown grace for requests whose cut connection it has not noticed yet
        # (the known limit: noticed at the 30 s handler timeout).
        objects, outbox_states = stored_objects(up_data)
        proxy.close()
        up.process.send_signal(signal.SIGTERM)
        try:
            up.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            up.kill9()
        biz.stop()
        levels, errors_logged, warnings = collections.Counter(), [], collections.Counter()
        with open(os.path.join(work, "up-server.log"), errors="replace") as f:
            for line in f:
                m = re.search(r'"level":"([a-z]+)"', line)
                level = m.group(1) if m else "?"
                levels[level] += 1
                msg = (re.search(r'"msg":"([^"]*)"', line) or [None, "?"])[1]
                if level in ("error", "critical"):
                    errors_logged.append(line.strip()[:300])
                elif level == "warning":
                    warnings[msg] += 1
        statuses = collections.Counter()
        with open(os.path.join(work, "up-server.log"), errors="replace") as f:
            for line in f:
                m = re.search(r'"msg":"request".*?"status":(\d+)', line)
                if m:
                    statuses[int(m.group(1))] += 1

        for proto in protocols:
            mine = [u for u in uploads if u.proto == proto]
            n = len(mine)
            finished = [u for u in mine if u.done]
            reruns = sum(u.reruns for u in mine)
            checks += [
                (f"{proto}: every upload finished through retries ({len(finished)}/{n}, {reruns} re-runs of up-cli)"
                 + "".join(f"; {u.key}: {u.failure}" for u in mine if u.failure),
                 len(finished) == n),
                (f"{proto}: no up-cli run hung (each ended within {args.hang_seconds} s)", not any(u.hang for u in mine)),
                (f"{proto}: up-cli hash == up-cli etag for every upload",
                 all(u.done and u.done.get("hash") == u.local and u.done.get("size") == u.size for u in mine)),
                (f"{proto}: up-server stat hash/fsize == the file's for every upload", all(u.stat_ok for u in mine)),
                (f"{proto}: every download equals its file", all(u.download_ok for u in mine)),
                (f"{proto}: exactly one biz-server record per upload, with the file's hash",
                 all(len(by_key[u.key]) == 1 and by_key[u.key][0].get("hash") == u.local
                     and by_key[u.key][0].get("fsize") == u.size for u in mine)),
                (f"{proto}: no checkpoint left after success", not any(u.checkpoint_left for u in mine)),
            ]
            if reruns:
                reasons = collections.Counter(r.split(":")[0] for u in mine for r in u.rerun_reasons)
                notes.append(f"{proto}: {reruns} re-runs after up-cli exited with a retryable error after "
                             f"{args.retries} retries: {dict(reasons)}; e.g. "
                             f"{[r for u in mine for r in u.rerun_reasons][:2]}")
        expected = {u.key: (u.local, u.size) for u in uploads}
        stored = {k: (e, f, seg) for k, e, f, seg in objects}
        wrong = [k for k, (e, f, seg) in stored.items() if k not in expected or expected[k] != (e, f) or seg != f]
        missing = [k for k in expected if k not in stored]
        checks += [
            (f"nothing corrupt stored: up-server's index holds exactly the {len(expected)} uploads, each with its "
             f"file's hash and size and segments summing to it" + (f" (wrong {wrong[:3]}, missing {missing[:3]})"
                                                                   if wrong or missing else ""),
             not wrong and not missing and len(stored) == len(expected)),
            ("up-server outbox drained: nothing pending or failed (admin API and index)",
             pending is not None and not pending.get("items") and failed is not None and not failed.get("items")
             and not any(outbox_states.get(state) for state in ("pending", "claimed", "dead"))),
            ("no record at biz-server besides the suite's uploads", set(by_key) <= set(expected)),
            ("up-server alive after every fault (no crash)", up_alive),
            ("up-server logged no error (network faults are the clients' doing)"
             + (f": {len(errors_logged)}, e.g. {errors_logged[:2]}" if errors_logged else ""), not errors_logged),
            (f"every fault kind injected at least once ({', '.join(KINDS)})", all(proxy.faults[k] for k in KINDS)),
            ("the proxy itself had no internal error" + (f": {proxy.errors[:3]}" if proxy.errors else ""),
             not proxy.errors),
        ]
        if harness_errors:
            checks.append((f"harness errors: {harness_errors[:3]}", False))
        data_total = sum(u.size for u in uploads)
        fault_total = sum(proxy.faults.values())
        per_type = collections.defaultdict(dict)
        for (rtype, kind), count in sorted(proxy.by_request.items()):
            per_type[rtype][kind] = count
        lib.log(SUITE, f"requests through the proxy: {dict(proxy.requests)}")
        lib.log(SUITE, f"faults by request: {dict(per_type)}")
        lib.log(SUITE, f"up-server answered (access log): {dict(sorted(statuses.items()))}; log levels {dict(levels)}; "
                       f"warnings {dict(warnings)}")
        if warnings:
            notes.append(f"up-server warnings: {dict(warnings)} (a handler timeout is the known limit: a connection "
                         f"closed mid-body while its body read is paused is noticed at the 30 s handler timeout)")
        totals.append(f"{fault_total} faults in {sum(proxy.requests.values())} requests "
                      f"({', '.join(f'{k} {proxy.faults[k]}' for k in KINDS)})")
        finishing = {t: sum(proxy.by_request[(t, k)] for k in ("truncate-response", "stall-response"))
                     for t in ("mkfile", "v2-complete", "form")}
        totals.append(f"{sum(finishing.values())} replies lost after the server stored the object "
                      f"(mkfile {finishing['mkfile']}, v2 complete {finishing['v2-complete']}, form {finishing['form']})")
        totals.append(f"up-server answered 701 x {statuses[701]} (stale ctx after a lost bput reply), "
                      f"599 x {statuses[599]} (a bput taken over by its retry), 503 x {statuses[503]}")
        totals.append(f"{len(uploads)} uploads ({', '.join(f'{p} {sum(1 for u in uploads if u.proto == p)}' for p in protocols)}), "
                      f"{sum(u.reruns for u in uploads)} up-cli re-runs")
        totals.append(f"re-sent {(proxy.data_bytes - data_total) / 2**20:.1f} MiB "
                      f"(forwarded {proxy.data_bytes / 2**20:.1f} MiB of data requests for {data_total / 2**20:.1f} MiB "
                      f"of files; up-server received {received / 2**20:.1f} MiB)")
    except Exception as e:  # a crash of the harness is a failure, never a pass
        import traceback
        traceback.print_exc()
        checks.append((f"harness error: {e!r}", False))
    finally:
        if proxy:
            proxy.close()
    for note in notes:
        print(f"  note: {note}", flush=True)
    return lib.finish(SUITE, checks, " | ".join(totals), started, args.seed, work, args.keep)


if __name__ == "__main__":
    sys.exit(main())
