"""One wave of the load suite (see load.py): N threads, each fetching its own token from
biz-server and uploading its bytes (form, or v1 mkblk + bput + mkfile on one keep-alive
connection) into up-server, all released together by barriers; and N connections held at once."""
import http.client
import json
import socket
import threading
import time
import zlib

import harness as h

class Upload:
    def __init__(self, wave, i, seed, rnd):
        self.wave, self.i = wave, i
        self.method = "form" if i % 2 == 0 else "v1"
        self.size = rnd.randint(4 << 10, 64 << 10)
        self.data = rnd.randbytes(self.size)
        self.etag = h.etag_of_bytes(self.data)  # the official SDK's etag
        self.key = f"demo/load/{seed}-w{wave}-{i}.bin"
        self.trace = f"load-{seed}-w{wave}-{i}"
        self.token_s = self.upload_s = None
        self.token_status = self.status = None
        self.reply = None
        self.error = ""  # why it failed ("" if it did not)


def request(conn, method, path, body, headers):
    status, _, reply = h.send(conn, method, path, body, headers)
    return status, reply


def fetch_token(u, biz_port, timeout):
    body = json.dumps({"key": u.key, "fsize": u.size, "traceId": u.trace}).encode()
    conn = http.client.HTTPConnection("127.0.0.1", biz_port, timeout=timeout)
    started = time.monotonic()
    try:
        status, reply = request(conn, "POST", "/v1/uptoken", body, {
            "Authorization": "Bearer " + h.API_KEY, "Content-Type": "application/json"})
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


def upload(u, token, up_port, timeout):
    """Form or v1 upload on one keep-alive connection; sets u.status / u.reply / u.error."""
    conn = http.client.HTTPConnection("127.0.0.1", up_port, timeout=timeout)
    auth = {"Authorization": "UpToken " + token, "Content-Type": "application/octet-stream"}
    started = time.monotonic()
    try:
        if u.method == "form":
            body, content_type = h.form_body([("token", token), ("key", u.key), ("crc32", str(zlib.crc32(u.data)))],
                                             u.data, filename=f"{u.i}.bin")
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
                status, reply = request(conn, "POST", f"/mkfile/{u.size}/key/{h.b64(u.key)}", block["ctx"].encode(),
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
