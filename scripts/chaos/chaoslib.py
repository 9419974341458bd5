"""What only the chaos suites need, on top of scripts/lib/harness: up-cli runs with --json progress,
checkpoint reading, the whole chain started with a recording callback proxy in front of biz-server,
and the checks on what was delivered.

Everything listens on 127.0.0.1 only; every process is tracked by pid (harness.processes).
"""
import json
import os
import subprocess
import threading
import time

import harness as h
from callback_proxy import CallbackProxy


class CliRun:
    """One up-cli process with --json; stdout parsed line by line on a thread."""

    def __init__(self, argv, out_path):
        self.argv, self.out_path = argv, out_path
        self.events, self.last_sent, self.first_sent = [], None, None
        self.progress = threading.Condition(threading.Lock())
        self.err = open(out_path + ".err", "wb")
        self.process = h.track(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.err, env=h.CLEAN_ENV,
                                                cwd=h.ROOT))
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
        h.kill9(self.process)

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

    def first_error_line(self, status):
        text = self.stderr_text().strip()
        return text.splitlines()[0][:200] if text else f"exit {status}"


def put_argv(bins, path, key, biz, checkpoint, proto, *extra):
    """`up-cli put` through biz-server (token, callback) with a checkpoint and --json progress."""
    return [os.path.join(bins, "up-cli"), "put", path, "--key", key, "--biz", biz.url, "--api-key", h.API_KEY,
            "--checkpoint", checkpoint, "--protocol", proto, "--json", *extra]


def checkpoint_acknowledged(path):
    """Bytes a checkpoint records as acknowledged (v1 block offsets, v2 part sizes), 0 without one."""
    try:
        with open(path) as f:
            cp = json.load(f)
    except (OSError, ValueError):
        return 0
    total = sum(int(block.get("offset", 0) or 0) for block in cp.get("blocks") or [])
    part_size, size = int(cp.get("partSize") or 0), int((cp.get("file") or {}).get("size") or 0)
    for part in cp.get("parts") or []:
        total += max(0, min(part_size, size - (int(part["number"]) - 1) * part_size))
    return total


class Chain:
    """up-server, the recording callback proxy and biz-server (whose tokens' callbackUrl is the
    proxy): every callback up-server delivers passes the proxy and is logged there."""

    def __init__(self, suite, bins, up_config=None, callback_timeout=2, up_binary=None, up_data_dir=None):
        work = suite.work
        config = up_config or h.up_config(work, timeout=callback_timeout)
        self.up = h.Server.up(bins, work, config=config, binary=up_binary, data_dir=up_data_dir)
        self.up.start()
        biz_port = h.free_port()
        self.proxy = CallbackProxy(biz_port, callback_timeout)
        self.biz = h.Server.biz(bins, work, self.up.url, port=biz_port, callback_base_url=self.proxy.url).start()

    def stop(self):
        self.up.stop()
        self.biz.stop()
        self.proxy.close()


def wait_for_outbox(chain, keys, seconds=60):
    """Waits (bounded) until biz-server lists every key and the outbox has nothing pending;
    returns (records, seconds waited)."""
    started = time.time()
    records = []
    while time.time() < started + seconds:
        records = h.biz_records(chain.biz.url) or []
        pending = h.outbox(chain.up.url, "pending")
        if set(keys) <= {r["key"] for r in records} and pending is not None and not h.outbox_entries(pending):
            break
        time.sleep(0.25)
    return records, time.time() - started


def check_records(suite, records, expected):
    """Exactly one biz-server row per upload, with its hash ({key: hash}), and no other row."""
    by_key = {}
    for r in records:
        by_key.setdefault(r.get("key"), []).append(r)
    wrong = [k for k, want in expected.items() if len(by_key.get(k, [])) != 1 or by_key[k][0].get("hash") != want]
    suite.check(f"exactly one biz-server record with the file's hash per upload ({len(expected) - len(wrong)}/"
                f"{len(expected)}; wrong: {wrong[:3]})", not wrong)
    suite.check(f"no biz-server record besides the suite's uploads ({sorted(set(by_key) - set(expected))[:3]})",
                set(by_key) <= set(expected))


def check_delivered_once(suite, chain, keys, biz_restarted=False, uploads=None, kills=()):
    """What was delivered, counted on the wire (the proxy's log) and by biz-server (its counters),
    not only the rows (biz-server deduplicates rows, so a second delivery never shows there):
    every upload's callback was delivered until biz-server's answer reached up-server in time, and
    never again after that (`uploads[key]`: uploads completed for a key when more than one, e.g.
    a form upload repeated after a lost reply; `kills`: times up-server was killed, see
    `delivery_problems`); biz-server counted exactly what it answered."""
    problems = chain.proxy.delivery_problems(keys, uploads, kills)
    deliveries = chain.proxy.deliveries_snapshot()
    suite.check(f"each callback delivered once per upload: retried until biz-server's answer reached up-server, "
                f"never after ({len(keys)} keys, {len(deliveries)} deliveries through the proxy; {problems[:3]})",
                not problems)
    stray = sorted({d.key for d in deliveries} - set(keys))
    suite.check(f"no callback delivered for a key the suite did not upload ({stray[:3]})", not stray)
    accepted = h.metric(chain.biz.url, "upgate_biz_callbacks_accepted_total")
    duplicate = h.metric(chain.biz.url, "upgate_biz_callbacks_duplicate_total")
    rejected = h.metric(chain.biz.url, "upgate_biz_callbacks_rejected_total")
    # biz-server's view: every delivery it answered 2xx, whether or not the answer reached up-server.
    answered = [d for d in deliveries if d.status and 200 <= d.status < 300]
    since = [d for d in answered if d.started >= chain.biz.started_at]
    first = len({d.key for d in since} - {d.key for d in answered if d.started < chain.biz.started_at})
    counted = accepted is not None and duplicate is not None and accepted + duplicate == len(since)
    if not biz_restarted:  # after a kill -9 a delivery may have been recorded without an answer
        counted = counted and accepted == first
    suite.check(f"biz-server counted what it answered: {accepted} accepted + {duplicate} duplicate = "
                f"{len(since)} deliveries answered 2xx since its start ({first} first ones), {rejected} rejected",
                counted and rejected == 0)
    return len(deliveries)
