"""server-crash: kill -9 up-server mid-upload, restart it on the same data dir and port, and let
the same up-cli command (its checkpoint) finish.

One upload per kill, alternating v1 and v2, the kill moment cycling through:
  mid-upload    progress (`bytesSent`) passed a random offset;
  mkfile        every chunk / part acknowledged in up-server's access log: the client is sending
                mkfile / complete;
  callback-post the callback proxy (tokens' callbackUrl points at it) passed the callback to
                biz-server, which recorded it, and holds the reply: up-server is killed before it
                learns of the delivery, so the outbox must redeliver and biz-server deduplicate;
  callback-pre  the proxy holds the callback before biz-server sees it and drops it: up-server is
                killed with the callback undelivered, so the outbox must deliver it after restart.
Checks per upload: the client finishes (reruns with the checkpoint, bounded) with the file's etag
(the official SDK's `qiniu.etag`); stat and download return the file byte for byte; a poller stats
and downloads the key throughout, never sees a wrong length or hash (no half-written object is
served) and must have seen every object; at the end biz-server holds exactly one record per
upload (bounded wait for the outbox), every callback was delivered until answered and never again
(the proxy's log, biz-server's counters), and the outbox has nothing pending or failed.
"""
import hashlib
import json
import os
import random
import sys
import threading
import time

import chaoslib as lib
import harness as h

SUITE = "server-crash"
KINDS = ["mid-upload", "mkfile", "callback-post", "callback-pre"]
KILLS = []  # when each kill -9 of up-server was done: a callback answered just before may come again


class Poller(threading.Thread):
    """Stats and downloads the keys being uploaded, all the time: any 200 must be the whole file."""

    def __init__(self, up_url):
        super().__init__(daemon=True)
        self.up_url, self.keys, self.bad, self.stats, self.seen = up_url, {}, [], 0, set()
        self.stop_event, self.lock = threading.Event(), threading.Lock()

    def watch(self, key, size, etag, sha1):
        with self.lock:
            self.keys[key] = (size, etag, sha1)

    def unwatch(self, key, seconds=10):
        """Stops watching `key` once the poller has seen its object (bounded wait)."""
        deadline = time.time() + seconds
        while time.time() < deadline and key not in self.seen:
            time.sleep(0.05)
        with self.lock:
            self.keys.pop(key, None)

    def run(self):
        last_download = {}
        while not self.stop_event.is_set():
            with self.lock:
                keys = dict(self.keys)
            for key, (size, etag, sha1) in keys.items():
                status, st = h.stat(self.up_url, key)
                if status == 200:
                    self.stats += 1
                    if st.get("fsize") != size or st.get("hash") != etag:
                        self.bad.append(f"stat {key}: {st}")
                    if time.time() - last_download.get(key, 0) > 1.0:
                        last_download[key] = time.time()
                        dstatus, body = h.download(self.up_url, key)
                        if dstatus == 200 and (len(body) != size or hashlib.sha1(body).hexdigest() != sha1):
                            self.bad.append(f"download {key}: {len(body)} bytes, sha1 {hashlib.sha1(body).hexdigest()}")
                        elif dstatus == 200:
                            self.seen.add(key)
                elif status not in (None, 612):
                    self.bad.append(f"stat {key}: HTTP {status}")
            self.stop_event.wait(0.1)


class Upload:
    def __init__(self, suite, bins, chain, i):
        args = suite.args
        self.i, self.kind, self.proto = i, KINDS[i % len(KINDS)], "v1" if i % 2 == 0 else "v2"
        self.path = h.make_file(os.path.join(suite.work, f"f{i}.bin"), args.size, seed=args.seed * 100 + i)
        self.etag, self.sha1 = h.etag(self.path), h.sha1_file(self.path)  # v2 in 4 MiB parts: the plain etag
        self.key = f"demo/chaos/server-crash-{args.seed}-{i}.bin"
        self.argv = lib.put_argv(bins, self.path, self.key, chain.biz, os.path.join(suite.work, f"f{i}.ckpt.json"),
                                 self.proto, "--concurrency", "2", "--chunk-size", "1M", "--part-size", "4M",
                                 "--limit-rate", args.rate)
        self.work, self.runs, self.done = suite.work, 0, None

    def run(self):
        run = lib.CliRun(self.argv, os.path.join(self.work, f"f{self.i}-run{self.runs}.jsonl"))
        self.runs += 1
        return run


def kill_during(suite, chain, u, rnd):
    """Starts the upload and kills up-server at the upload's moment; returns the first run."""
    if u.kind in ("callback-post", "callback-pre"):
        chain.proxy.arm("post" if u.kind == "callback-post" else "pre")
    log_offset = os.path.getsize(chain.up.log_path)
    run = u.run()
    target = rnd.randint(suite.args.size // 10, suite.args.size * 7 // 10)
    if u.kind == "mid-upload":
        hit = run.wait_until(lambda r: (r.last_sent or 0) >= target, timeout=120)
    elif u.kind == "mkfile":
        # up-server's access log: kill as soon as the last chunk / part is acknowledged (JSON
        # progress is throttled to 5 a second, too coarse for this moment).
        hit = wait_for_chunks(chain.up.log_path, log_offset, u.proto, suite.args.size, timeout=120)
    else:
        hit = chain.proxy.hit.wait(120)
    chain.up.kill9()
    KILLS.append(time.time())
    moment = f"at {(run.last_sent or 0) / 2**20:.1f} MiB" if u.kind in ("mid-upload", "mkfile") else "callback held"
    chain.proxy.disarm()
    status = run.wait(timeout=120)
    suite.log(f"upload {u.i} ({u.proto}, {u.kind}): up-server killed {moment} (hit={hit}); first run exit {status}")
    u.done = run.event("done") if status == 0 else None
    return hit


def resume(suite, u):
    """The same command again until it finishes (at most 6 runs in all)."""
    while u.done is None and u.runs < 6:
        run = u.run()
        status = run.wait(timeout=300)
        u.done = run.event("done") if status == 0 else None
        if u.done is None:
            suite.log(f"upload {u.i} run {u.runs}: exit {status}: {run.stderr_text().strip()[-300:]}")


def check_upload(suite, chain, u, hit):
    st_status, st = h.stat(chain.up.url, u.key)
    dl_status, body = h.download(chain.up.url, u.key)
    ok_dl = dl_status == 200 and len(body) == suite.args.size and hashlib.sha1(body).hexdigest() == u.sha1
    done = u.done or {}
    reply = done.get("reply") or {}
    suite.check(f"upload {u.i} ({u.proto}, killed {u.kind}): the kill landed where aimed", bool(hit))
    suite.check(f"upload {u.i} ({u.proto}, killed {u.kind}): the client finished ({u.runs} runs) with qiniu.etag "
                f"of the file", bool(u.done) and done.get("hash") == u.etag)
    suite.check(f"upload {u.i}: stat = the file's hash and size", st_status == 200 and st.get("hash") == u.etag
                and st.get("fsize") == suite.args.size)
    suite.check(f"upload {u.i}: the download is byte-exact", ok_dl)
    suite.check(f"upload {u.i}: the client's reply is biz-server's record ({sorted(reply)[:4]})",
                bool(reply.get("id")) and reply.get("key") == u.key and reply.get("hash") == u.etag)
    return (f"{u.i}:{u.proto}/{u.kind}/{u.runs} runs/reply {'record' if 'id' in reply else sorted(reply)}"
            f"/last run sent {done.get('bytesSent', 0) / 2**20:.0f} MiB"
            f"{' (resumed)' if done.get('resumed') else ' (started over)'}")


def one_upload(suite, bins, chain, poller, i, rnd):
    u = Upload(suite, bins, chain, i)
    poller.watch(u.key, suite.args.size, u.etag, u.sha1)
    hit = kill_during(suite, chain, u, rnd)
    chain.up.start()
    resume(suite, u)
    note = check_upload(suite, chain, u, hit)
    poller.unwatch(u.key)  # once seen; keep the poller on the uploads in flight
    return u, note


def check_the_end(suite, chain, poller, uploads):
    """Records, deliveries, the outbox and what the poller saw, once the outbox is done."""
    records, _ = lib.wait_for_outbox(chain, [u.key for u in uploads])
    lib.check_records(suite, records, {u.key: u.etag for u in uploads})
    lib.check_delivered_once(suite, chain, [u.key for u in uploads], kills=KILLS)
    suite.check("up-server outbox: nothing pending or failed at the end", h.outbox_idle(chain.up.url))
    poller.stop_event.set()
    poller.join(timeout=30)
    suite.check(f"no half-written object served ({poller.stats} stats while uploading; {len(poller.bad)} bad: "
                f"{poller.bad[:3]})", not poller.bad)
    unseen = [u.key for u in uploads if u.key not in poller.seen]
    suite.check(f"the poller saw every object it watched, whole ({len(uploads) - len(unseen)}/{len(uploads)}; "
                f"{poller.stats} stats answered 200)", not unseen and poller.stats > 0)


def wait_for_chunks(log_path, offset, proto, size, timeout):
    """Waits until up-server's log (from `offset`) shows every chunk (v1: mkblk/bput of 1 MiB) or
    part (v2: 4 MiB) of the upload acknowledged with 200."""
    expected = -(-size // ((1 << 20) if proto == "v1" else (4 << 20)))
    seen, deadline = 0, time.time() + timeout
    with open(log_path, "rb") as f:
        f.seek(offset)
        pending = b""
        while time.time() < deadline:
            data = f.read()
            if not data:
                time.sleep(0.002)
                continue
            pending += data
            *lines, pending = pending.split(b"\n")
            for line in lines:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if entry.get("msg") != "request" or entry.get("status") != 200:
                    continue
                path = entry.get("path", "")
                if (proto == "v1" and path.startswith(("/mkblk/", "/bput/"))) or \
                        (proto == "v2" and entry.get("method") == "PUT" and "/uploads/" in path):
                    seen += 1
            if seen >= expected:
                return True
    return False


def parse_args():
    ap = h.suite_arguments(__doc__, "3 kills on 16 MiB files (default: 10 on 64 MiB)")
    ap.add_argument("--kills", type=int)
    ap.add_argument("--size", type=int)
    args = h.short_or_full(ap.parse_args(), kills=(3, 10), size=(16 << 20, 64 << 20))
    args.rate = "8M"  # JSON progress comes 5 times a second: a kill lands within 1.6 MB of its offset
    return args


def main():
    args = parse_args()
    suite = h.Suite(SUITE, args, "upgate-chaos-server-")
    bins = suite.bins
    suite.log(f"seed {args.seed}, {args.kills} kills, {args.size >> 20} MiB files, work {suite.work}")
    rnd = random.Random(args.seed)
    notes = []
    with suite:
        chain = lib.Chain(suite, bins)
        poller = Poller(chain.up.url)
        poller.start()
        uploads = []
        for i in range(args.kills):
            u, note = one_upload(suite, bins, chain, poller, i, rnd)
            uploads.append(u)
            notes.append(note)
        check_the_end(suite, chain, poller, uploads)
        chain.stop()
    return suite.finish(f"{args.kills} up-server kills; " + ", ".join(notes))


if __name__ == "__main__":
    sys.exit(main())
