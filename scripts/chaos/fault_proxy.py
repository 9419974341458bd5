"""The fault-injecting TCP proxy of the net-fault suite (see net_fault.py): 127.0.0.1:<port> ->
up-server, one request per connection (it adds `Connection: close`), each request drawing its
fate from a seeded RNG: passed through, or one of KINDS."""
import collections
import json
import random
import re
import socket
import struct
import threading
import time

KINDS = ("delay", "reset", "truncate-request", "truncate-response", "stall-request", "stall-response")
PIECE = 64 << 10


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
        self.form_completions = collections.Counter()  # key -> form uploads up-server completed (200/579)
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
            if rtype == "form":
                self._count_form(reply)
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

    def _count_form(self, reply):
        """A form upload up-server completed (stored; its callback delivered or queued) is a new
        upload even when it repeats one whose reply was lost: the key comes from the JSON reply."""
        head, _, body = reply.partition(b"\r\n\r\n")
        m = re.match(rb"HTTP/1\.[01] (\d{3})", head)
        if not m or int(m.group(1)) not in (200, 579):
            return
        try:
            key = json.loads(body).get("key")
        except (ValueError, AttributeError):
            key = None
        with self.lock:
            self.form_completions[key] += 1

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
