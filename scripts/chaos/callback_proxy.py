"""A loopback HTTP proxy in front of biz-server's /v1/callback that logs every delivery.

Tokens point their callbackUrl here (biz-server's UPGATE_BIZ_PUBLIC_BASE_URL, or the policy's
callbackUrl). Each request up-server sends is one `Delivery`: the upload's key and hash (from the
form or JSON body), biz-server's status (None when biz-server did not answer), and whether the
answer went back to up-server in full (`ok`) and how fast. That log, not biz-server's rows (which
are deduplicated), is what says how often a callback was delivered.

Transparent unless armed (server-crash):
  arm("pre")   the next callback is held BEFORE it reaches biz-server, and dropped on release;
  arm("post")  the next callback reaches biz-server (recorded), its answer is held, then dropped.
`hit` is set while the armed callback is held, so the caller can kill up-server then.
"""
import http.client
import http.server
import json
import threading
import time
import urllib.parse


# Seconds after a delivery's answer reached up-server within which a kill -9 may have come
# before its outbox recorded the delivery (it does so at once: a few milliseconds).
KILL_WINDOW = 1.0


def _killed_before_recorded(first, repeat, kills):
    """Whether up-server was killed after `first`'s answer reached it, within KILL_WINDOW, and
    before `repeat` started: then `repeat` is the outbox's redelivery, not a second one."""
    answered = first.started + first.seconds
    return any(answered <= k <= min(repeat.started, answered + KILL_WINDOW) for k in kills)


class Delivery:
    __slots__ = ("key", "hash", "started", "status", "ok", "seconds", "armed")

    def __init__(self, key, hash_, started, armed):
        self.key, self.hash, self.started, self.armed = key, hash_, started, armed
        self.status, self.ok, self.seconds = None, False, None

    def __repr__(self):
        return f"<{self.key} {self.status} ok={self.ok} {self.seconds and round(self.seconds, 2)} s {self.armed or ''}>"


def _upload_of(body):
    """(key, hash) of a callback body: the form fields biz-server's tokens ask for, or JSON."""
    try:
        fields = json.loads(body)
        if isinstance(fields, dict):
            return fields.get("key"), fields.get("hash")
    except ValueError:
        pass
    fields = urllib.parse.parse_qs(body.decode(errors="replace"))
    return (fields.get("key") or [None])[0], (fields.get("hash") or [None])[0]


class CallbackProxy:
    def __init__(self, target_port, callback_timeout):
        proxy = self
        self.target_port = target_port
        # An answer later than this may have reached up-server after it gave up (its callback
        # timeout): a redelivery after such an answer is not a second delivery of a known result.
        self.in_time = callback_timeout * 0.75
        self.mode, self.hit, self.release = None, threading.Event(), threading.Event()
        self.lock = threading.Lock()
        self.deliveries = []

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                proxy._serve(self)

            do_GET = do_POST

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _serve(self, handler):
        started = time.time()
        body = handler.rfile.read(int(handler.headers.get("Content-Length", "0")))
        with self.lock:
            mode, self.mode = self.mode, None
            delivery = Delivery(*_upload_of(body), started, mode)
            self.deliveries.append(delivery)
        if mode == "pre":
            self.hit.set()
            self.release.wait(60)
            handler.close_connection = True
            return  # dropped: biz-server never sees this attempt
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in ("host", "connection")}
        try:
            conn = http.client.HTTPConnection("127.0.0.1", self.target_port, timeout=30)
            conn.request(handler.command, handler.path, body=body, headers=headers)
            response = conn.getresponse()
            reply, status, reply_headers = response.read(), response.status, response.getheaders()
            conn.close()
        except (OSError, http.client.HTTPException):
            handler.close_connection = True  # biz-server down: up-server sees the connection fail
            return
        delivery.status = status
        if mode == "post":
            self.hit.set()
            self.release.wait(60)
            handler.close_connection = True
            return  # recorded by biz-server, the answer never reaches up-server
        try:
            handler.send_response(status)
            for k, v in reply_headers:
                if k.lower() not in ("connection", "transfer-encoding", "content-length"):
                    handler.send_header(k, v)
            handler.send_header("Content-Length", str(len(reply)))
            handler.end_headers()
            handler.wfile.write(reply)
            handler.wfile.flush()
        except OSError:
            return
        delivery.ok, delivery.seconds = True, time.time() - started

    def arm(self, mode):
        with self.lock:
            self.mode = mode
        self.hit.clear()
        self.release.clear()

    def disarm(self):
        with self.lock:
            self.mode = None
        self.release.set()

    def deliveries_snapshot(self):
        with self.lock:
            return list(self.deliveries)

    def delivery_problems(self, keys, uploads=None, kills=()):
        """Per key: the number of deliveries answered 2xx in time must be the number of uploads
        that completed for it (`uploads[key]`, default 1: a repeated mkfile is not a new upload, a
        repeated form upload is), and the last delivery must be answered. A delivery after a
        failed or late one is a retry; one after an answered one is a second delivery, unless
        up-server was killed (`kills`: times of kill -9) within KILL_WINDOW seconds after that
        answer reached it and before the repeat: it may have died before its outbox recorded the
        delivery, and at-least-once means it delivers again. Empty when every callback was
        delivered exactly once in effect."""
        by_key = {}
        for d in self.deliveries_snapshot():
            by_key.setdefault(d.key, []).append(d)
        problems = []
        for key in keys:
            ds = by_key.get(key, [])
            answered = [d for d in ds if d.ok and d.status and 200 <= d.status < 300]
            in_time = [d for d in answered if d.seconds < self.in_time]
            want = (uploads or {}).get(key, 1)
            excused = sum(1 for a, b in zip(in_time, in_time[1:]) if _killed_before_recorded(a, b, kills))
            if not answered or ds[-1] not in answered:
                problems.append(f"{key}: the last delivery was not answered 2xx ({ds})")
            elif len(in_time) - excused > want:
                problems.append(f"{key}: delivered {len(in_time)} times with biz-server's answer back in time, "
                                f"for {want} upload(s) ({ds})")
        return problems

    def close(self):
        self.disarm()
        self.server.shutdown()
        self.server.server_close()
