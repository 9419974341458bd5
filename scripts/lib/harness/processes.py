"""Processes on loopback: free ports, children tracked and stopped by pid, up-server and biz-server
with temp configs, the binaries under test."""
import atexit
import http.client
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

from ports import free_port  # noqa: F401 - scripts/lib/ports.py, re-exported by harness

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
# The UPGATE_* variables would replace the development keys the Config/ files share.
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith("UPGATE_")}

_children = []  # every Popen this process started; SIGKILLed by pid on exit


def track(process):
    """Registers a child to be killed (by its pid) when this process exits; returns it."""
    _children.append(process)
    return process


def _kill_children():
    for p in _children:
        if p.poll() is None:
            try:
                p.kill()
                p.wait(timeout=5)
            except Exception:
                pass


_installed = []


def install_cleanup():
    """Kill every tracked child on exit, SIGTERM and SIGINT (Ctrl-C) included (once per process)."""
    if _installed:
        return
    _installed.append(True)
    atexit.register(_kill_children)

    def on_signal(signum, _frame):
        _kill_children()
        sys.exit(128 + signum)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)


def wait_ready(url, process=None, name="server", timeout=20):
    """Polls GET url until 200; raises if `process` exits first or the time is up."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{name} exited ({process.returncode}) before answering {url}")
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, OSError, http.client.HTTPException):
            pass
        time.sleep(0.05)
    raise RuntimeError(f"{name} did not answer {url} within {timeout} s")


def kill9(process):
    if process is not None and process.poll() is None:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)


def stop(process, grace=15):
    """SIGTERM, then SIGKILL after `grace` seconds."""
    if process is not None and process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            kill9(process)


class Server:
    """One up-server or biz-server process on a fixed loopback port and data dir (restartable)."""

    def __init__(self, name, binary, config, port, data_dir, log_path, env=None, extra=()):
        self.name, self.binary, self.config, self.port = name, binary, config, port
        self.data_dir, self.log_path, self.env, self.extra = data_dir, log_path, env or {}, list(extra)
        self.process = None
        self.started_at = None
        self.url = f"http://127.0.0.1:{port}"

    def start(self, timeout=20):
        with open(self.log_path, "ab") as log:
            self.process = track(subprocess.Popen(
                [self.binary, "--config", self.config, "--port", str(self.port), "--data-dir", self.data_dir,
                 "--log-level", "info", *self.extra], stdout=subprocess.DEVNULL, stderr=log,
                env=dict(CLEAN_ENV, **self.env), cwd=ROOT))
        self.started_at = time.time()
        wait_ready(self.url + "/healthz", self.process, f"{self.name} (see {self.log_path})", timeout)
        return self

    def kill9(self):
        kill9(self.process)

    def stop(self, grace=15):
        stop(self.process, grace)

    def alive(self):
        return self.process is not None and self.process.poll() is None

    @classmethod
    def up(cls, bins, work, config=None, binary=None, data_dir=None):
        """up-server on a free port, data in work/up, log work/up-server.log."""
        return cls("up-server", binary or os.path.join(bins, "up-server"), config or up_config(work), free_port(),
                   data_dir or os.path.join(work, "up"), os.path.join(work, "up-server.log"))

    @classmethod
    def biz(cls, bins, work, up_url, config=None, port=None, callback_base_url=None):
        """biz-server on `port` (default: a free one) handing out `up_url`; `callback_base_url` (a
        proxy) goes into the tokens' callbackUrl instead of biz-server's own address."""
        env = {"UPGATE_UP_HOSTS": up_url}
        if callback_base_url:
            env["UPGATE_BIZ_PUBLIC_BASE_URL"] = callback_base_url
        return cls("biz-server", os.path.join(bins, "biz-server"), config or biz_config(work), port or free_port(),
                   os.path.join(work, "biz"), os.path.join(work, "biz-server.log"), env=env)


def cpu_seconds(pid):
    """user + system CPU seconds of a live process (None if it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def context_switches(pid):
    """Context switches (voluntary + involuntary) of a live process's threads alive now, or None.

    Each wake-up of a thread that had to wait is one; on this 2-core VM the count per request
    moves far less from run to run than CPU time or throughput, so it compares two builds."""
    try:
        total = 0
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/status") as f:
                    total += sum(int(line.split()[1]) for line in f
                                 if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")))
            except OSError:
                continue  # the thread ended meanwhile
        return total
    except OSError:
        return None


def postgres_cpu_seconds(pg_dir):
    """CPU seconds of a private cluster's postmaster and its live backends (its children)."""
    try:
        master = int(open(os.path.join(pg_dir, "data", "postmaster.pid")).readline())
        children = open(f"/proc/{master}/task/{master}/children").read().split()
    except (OSError, ValueError):
        return None
    return sum(cpu_seconds(int(pid)) or 0 for pid in [master, *children])


PRODUCTS = ("up-server", "biz-server", "up-cli")


def build_release(source=ROOT):
    """`swift build -c release` of every product in the checkout `source`; returns its bin path."""
    for product in PRODUCTS:  # swift build honours only the last of several --product options
        subprocess.run(["swift", "build", "-c", "release", "--product", product], cwd=source, check=True,
                       stdout=sys.stderr)
    return subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=source, capture_output=True,
                          text=True, check=True).stdout.strip()


def bin_dir(args_bin):
    """--bin DIR, else $CHAOS_BIN, else the release build (built here if missing)."""
    d = args_bin or os.environ.get("CHAOS_BIN")
    if d:
        return os.path.abspath(d)
    out = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.strip()
    if not all(os.access(os.path.join(out, b), os.X_OK) for b in PRODUCTS):
        return build_release()
    return out


def write_config(work, name, change):
    """work/NAME: Config/NAME as a dict passed through `change(config)`; returns the path."""
    with open(os.path.join(ROOT, "Config", name), encoding="utf-8") as f:
        config = json.load(f)
    change(config)
    path = os.path.join(work, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2)
    return path


def up_config(work, retry_base=1, retry_max=2, max_retries=30, timeout=2):
    """Config/up-server.json with short callback retry delays."""
    def change(config):
        config["callback"] = dict(config.get("callback", {}), timeoutSeconds=timeout, maxRetries=max_retries,
                                  retryBaseDelaySeconds=retry_base, retryMaxDelaySeconds=retry_max)
    return write_config(work, "up-server.json", change)


def biz_config(work, rate=1000, burst=1000):
    """Config/biz-server.json whose token rate limit does not throttle the suite."""
    def change(config):
        config["rateLimit"] = {"tokensPerSecond": rate, "burst": burst}
    return write_config(work, "biz-server.json", change)
