"""Shared pieces of the chaos suites (scripts/chaos/*): servers on loopback, up-cli runs with
--json progress, biz-server records, management stat/download, a callback proxy.

Everything listens on 127.0.0.1 only. Every process started here is tracked by pid and killed on
exit (also on failure and Ctrl-C). Runs under scripts/pyenv's python (the official qiniu SDK).
"""
import base64
import hashlib
import hmac
import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AK, SK, API_KEY, BUCKET = "dev-access-key", "dev-secret-key", "dev-api-key", "demo"
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith("UPGATE_")}

_children = []  # Popen objects this process started


def _cleanup():
    for p in _children:
        if p.poll() is None:
            try:
                p.kill()
                p.wait(timeout=5)
            except Exception:
                pass


def install_cleanup():
    import atexit
    atexit.register(_cleanup)

    def on_signal(signum, _frame):
        _cleanup()
        sys.exit(128 + signum)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)


def log(suite, message):
    print(f"[{suite} {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bin_dir(args_bin):
    """--bin DIR, else $CHAOS_BIN, else the release build (built here if missing)."""
    d = args_bin or os.environ.get("CHAOS_BIN")
    if d:
        return os.path.abspath(d)
    out = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.strip()
    if not all(os.access(os.path.join(out, b), os.X_OK) for b in ("up-server", "biz-server", "up-cli")):
        for product in ("up-server", "biz-server", "up-cli"):
            subprocess.run(["swift", "build", "-c", "release", "--product", product], cwd=ROOT, check=True,
                           stdout=sys.stderr)
    return out


def make_file(path, size, seed):
    rnd = random.Random(seed)
    with open(path, "wb") as f:
        left = size
        while left > 0:
            n = min(left, 1 << 20)
            f.write(rnd.randbytes(n))
            left -= n
    return path


def sha1_file(path):
    h = hashlib.sha1()
    with open(path, "rb") as f:
        for piece in iter(lambda: f.read(1 << 20), b""):
            h.update(piece)
    return h.hexdigest()


# ---------------------------------------------------------------- servers

class Server:
    """One up-server or biz-server process on a fixed loopback port and data dir (restartable)."""

    def __init__(self, name, binary, config, port, data_dir, log_path, env=None, extra=()):
        self.name, self.binary, self.config, self.port = name, binary, config, port
        self.data_dir, self.log_path, self.env, self.extra = data_dir, log_path, env or {}, list(extra)
        self.process = None
        self.url = f"http://127.0.0.1:{port}"

    def start(self, timeout=20):
        logf = open(self.log_path, "ab")
        env = dict(CLEAN_ENV, **self.env)
        self.process = subprocess.Popen(
            [self.binary, "--config", self.config, "--port", str(self.port), "--data-dir", self.data_dir,
             "--log-level", "info", *self.extra], stdout=subprocess.DEVNULL, stderr=logf, env=env, cwd=ROOT)
        logf.close()
        _children.append(self.process)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited ({self.process.returncode}) before answering /healthz; "
                                   f"see {self.log_path}")
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=1) as r:
                    if r.status == 200:
                        return self
            except (urllib.error.URLError, OSError, http.client.HTTPException):
                time.sleep(0.05)
        raise RuntimeError(f"{self.name} did not answer {self.url}/healthz within {timeout} s")

    def kill9(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill9()

    def alive(self):
        return self.process is not None and self.process.poll() is None


def up_config(work, retry_base=1, retry_max=2, max_retries=30, timeout=2):
    """A temp copy of Config/up-server.json with short callback retry delays."""
    with open(os.path.join(ROOT, "Config", "up-server.json")) as f:
        config = json.load(f)
    config["callback"] = dict(config.get("callback", {}), timeoutSeconds=timeout, maxRetries=max_retries,
                              retryBaseDelaySeconds=retry_base, retryMaxDelaySeconds=retry_max)
    path = os.path.join(work, "up-server.json")
    with open(path, "w") as f:
        json.dump(config, f, indent=2)
    return path


def biz_config(work, rate=1000, burst=1000):
    """A temp copy of Config/biz-server.json whose token rate limit does not throttle the suite."""
    with open(os.path.join(ROOT, "Config", "biz-server.json")) as f:
        config = json.load(f)
    config["rateLimit"] = {"tokensPerSecond": rate, "burst": burst}
    path = os.path.join(work, "biz-server.json")
    with open(path, "w") as f:
        json.dump(config, f, indent=2)
    return path


# ---------------------------------------------------------------- HTTP helpers

def qbox(path_and_query):
    digest = hmac.new(SK.encode(), (path_and_query + "\n").encode(), hashlib.sha1).digest()
    return "QBox " + AK + ":" + base64.urlsafe_b64encode(digest).decode()


def entry(key):
    return base64.urlsafe_b64encode(f"{BUCKET}:{key}".encode()).decode()


def http_get(url, headers=None, timeout=30):
    """(status, body bytes); status None on a connection error."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except (urllib.error.URLError, OSError, http.client.HTTPException):
        return None, b""


def stat(up, key):
    path = "/stat/" + entry(key)
    status, body = http_get(up + path, {"Authorization": qbox(path)}, timeout=10)
    return status, (json.loads(body) if status == 200 else None)


def download(up, key):
    path = "/download/" + entry(key)
    return http_get(up + path, {"Authorization": qbox(path)}, timeout=120)


def outbox(up, state):
    path = f"/admin/outbox?state={state}"
    status, body = http_get(up + path, {"Authorization": qbox(path)}, timeout=10)
    return json.loads(body) if status == 200 else None


def biz_records(biz):
    """Every upload record of client demo (all pages), or None if biz-server does not answer."""
    items, after = [], None
    for _ in range(1000):
        url = biz + "/v1/uploads?limit=100" + (f"&after={after}" if after else "")
        status, body = http_get(url, {"Authorization": "Bearer " + API_KEY}, timeout=10)
        if status != 200:
            return None
        page = json.loads(body)
        items += page["items"]
        after = page.get("next")
        if not after:
            return items
    return items


def metric(up, name):
    status, body = http_get(up + "/metrics", timeout=10)
    if status != 200:
        return None
    total = 0.0
    for line in body.decode().splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            total += float(line.rsplit(" ", 1)[1])
    return total


# ---------------------------------------------------------------- up-cli runs

class CliRun:
    """One up-cli process with --json; stdout parsed line by line on a thread."""

    def __init__(self, argv, out_path):
        self.argv, self.out_path = argv, out_path
        self.events, self.last_sent, self.first_sent = [], None, None
        self.lock = threading.Lock()
        self.progress = threading.Condition(self.lock)
        self.err = open(out_path + ".err", "wb")
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.err, env=CLEAN_ENV, cwd=ROOT)
        _children.append(self.process)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        with open(self.out_path, "wb") as out:
            for raw in self.process.stdout:
                out.write(raw)
                try:
                    event = json.loads(raw)
                except ValueError:
                    continue
                with self.progress:
                    self.events.append(event)
                    if event.get("event") == "progress":
                        self.last_sent = event["bytesSent"]
                        if self.first_sent is None:
                            self.first_sent = event["bytesSent"]
                    self.progress.notify_all()
        with self.progress:
            self.progress.notify_all()

    def wait_until(self, predicate, timeout):
        """Waits until predicate(self) (under the lock) or the process ends; True if it held."""
        deadline = time.time() + timeout
        with self.progress:
            while True:
                if predicate(self):
                    return True
                if self.process.poll() is not None and not self.reader.is_alive():
                    return False
                left = deadline - time.time()
                if left <= 0:
                    return False
                self.progress.wait(min(left, 0.05))

    def kill9(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)

    def wait(self, timeout=600):
        try:
            status = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill9()
            status = self.process.wait()
        self.reader.join(timeout=10)
        self.err.close()
        return status

    def event(self, name):
        return next((e for e in self.events if e.get("event") == name), None)

    def stderr_text(self):
        try:
            with open(self.out_path + ".err", "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""


def checkpoint_acknowledged(path):
    """Bytes a checkpoint records as acknowledged (v1 block offsets, v2 part sizes), 0 without one."""
    try:
        with open(path) as f:
            cp = json.load(f)
    except (OSError, ValueError):
        return 0
    total = 0
    for block in cp.get("blocks") or []:
        total += int(block.get("offset", 0) or 0)
    part_size, size = int(cp.get("partSize") or 0), int((cp.get("file") or {}).get("size") or 0)
    for part in cp.get("parts") or []:
        total += max(0, min(part_size, size - (int(part["number"]) - 1) * part_size))
    return total


def etag_of(cli, path):
    return subprocess.run([cli, "etag", path], capture_output=True, text=True, check=True, env=CLEAN_ENV).stdout.strip()


# ---------------------------------------------------------------- callback proxy

class CallbackProxy:
    """A loopback HTTP proxy in front of biz-server's /v1/callback (tokens point their callbackUrl
    here through UPGATE_BIZ_PUBLIC_BASE_URL). Transparent unless armed:
      arm("pre")  the next callback is held BEFORE it reaches biz-server, and dropped on release;
      arm("post") the next callback reaches biz-server (recorded), its reply is held, then released.
    `hit` is set when the armed callback is being held, so the caller can kill up-server then."""

    def __init__(self, target_port):
        import http.server
        proxy = self
        self.target_port = target_port
        self.mode, self.hit, self.release = None, threading.Event(), threading.Event()
        self.forwarded = 0
        self.lock = threading.Lock()

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with proxy.lock:
                    mode, proxy.mode = proxy.mode, None
                if mode == "pre":
                    proxy.hit.set()
                    proxy.release.wait(60)
                    self.close_connection = True
                    return  # dropped: biz-server never sees this attempt
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                try:
                    conn = http.client.HTTPConnection("127.0.0.1", proxy.target_port, timeout=30)
                    conn.request("POST", self.path, body=body, headers=headers)
                    response = conn.getresponse()
                    reply, status, rheaders = response.read(), response.status, response.getheaders()
                    conn.close()
                except OSError:
                    self.close_connection = True
                    return
                with proxy.lock:
                    proxy.forwarded += 1
                if mode == "post":
                    proxy.hit.set()
                    proxy.release.wait(60)
                try:
                    self.send_response(status)
                    for k, v in rheaders:
                        if k.lower() not in ("connection", "transfer-encoding", "content-length"):
                            self.send_header(k, v)
                    self.send_header("Content-Length", str(len(reply)))
                    self.end_headers()
                    self.wfile.write(reply)
                except OSError:
                    pass

            do_GET = do_POST

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def arm(self, mode):
        with self.lock:
            self.mode = mode
        self.hit.clear()
        self.release.clear()

    def disarm(self):
        with self.lock:
            self.mode = None
        self.release.set()


def summary(suite, checks, extra=""):
    failed = [name for name, ok in checks if not ok]
    status = "FAIL" if failed else "PASS"
    line = f"{suite}: {status} {len(checks) - len(failed)}/{len(checks)} checks passed" + (f"; {extra}" if extra else "")
    print(line, flush=True)
    for name in failed:
        print(f"  failed: {name}", flush=True)
    return 1 if failed else 0


def finish(suite, checks, extra, started, seed, work, keep):
    """The suite's end: its summary line (with duration and seed), then the work directory kept
    (`--keep`, or on failure, for a look) or removed. Returns the exit status."""
    status = summary(suite, checks, extra + f" | {time.time() - started:.0f} s, seed {seed}")
    if keep or status:
        print(f"  work directory kept: {work}", flush=True)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return status


def v2_hash(path, part_size):
    """The hash of a v2 multipart upload with parts of `part_size` (qiniu-protocol.md §7.2): the
    plain etag for the 4 MiB layout, else urlsafe-b64(0x9E + SHA1(digest of every part)), a part's
    digest being SHA-1 of its bytes (≤ 4 MiB) or SHA-1 of its 4 MiB blocks' SHA-1s."""
    block = 4 << 20
    digests = []
    with open(path, "rb") as f:
        while True:
            part = f.read(part_size)
            if not part:
                break
            if len(part) <= block:
                digests.append(hashlib.sha1(part).digest())
            else:
                inner = b"".join(hashlib.sha1(part[o:o + block]).digest() for o in range(0, len(part), block))
                digests.append(hashlib.sha1(inner).digest())
    if part_size == block:
        from qiniu import etag
        return etag(path)
    return base64.urlsafe_b64encode(b"\x9e" + hashlib.sha1(b"".join(digests)).digest()).decode()
