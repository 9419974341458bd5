"""server-crash: kill -9 up-server mid-upload, restart it on the same data dir and port, and let
the same up-cli command (its checkpoint) finish.

One upload per kill, alternating v1 and v2, the kill moment cycling through:
  mid-upload    progress (`bytesSent`) passed a random offset;
  mkfile        progress reached the file size: the last chunks / parts are in flight or the
                client is sending mkfile / complete (kill right after the client logs its last block);
  callback-post a callback proxy (tokens' callbackUrl points at it) passed the callback to
                biz-server, which recorded it, and holds the reply: up-server is killed before it
                learns of the delivery, so the outbox must redeliver and biz-server deduplicate;
  callback-pre  the proxy holds the callback before biz-server sees it and drops it: up-server is
                killed with the callback undelivered, so the outbox must deliver it after restart.
Checks per upload: the client finishes (reruns with the checkpoint, bounded) with the file's etag;
stat and download return the file byte for byte; a poller stats and downloads the key throughout
and never sees a wrong length or hash (no half-written object is served); at the end biz-server
holds exactly one record per upload (bounded wait for the outbox) and the outbox has nothing
pending or failed.
"""
import argparse
import hashlib
import os
import random
import sys
import tempfile
import threading
import time

import chaoslib as lib

SUITE = "server-crash"
KINDS = ["mid-upload", "mkfile", "callback-post", "callback-pre"]


class Poller(threading.Thread):
    """Stats and downloads the keys being uploaded, all the time: any 200 must be the whole file."""

    def __init__(self, up_url):
        super().__init__(daemon=True)
        self.up_url, self.keys, self.bad, self.seen = up_url, {}, [], 0
        self.stop_event, self.lock = threading.Event(), threading.Lock()

    def watch(self, key, size, etag, sha1):
        with self.lock:
            self.keys[key] = (size, etag, sha1)

    def unwatch(self, key):
        with self.lock:
            self.keys.pop(key, None)

    def run(self):
        last_download = {}
        while not self.stop_event.is_set():
            with self.lock:
                keys = dict(self.keys)
            for key, (size, etag, sha1) in keys.items():
                status, st = lib.stat(self.up_url, key)
                if status == 200:
                    self.seen += 1
                    if st.get("fsize") != size or st.get("hash") != etag:
                        self.bad.append(f"stat {key}: {st}")
                    if time.time() - last_download.get(key, 0) > 1.0:
                        last_download[key] = time.time()
                        dstatus, body = lib.download(self.up_url, key)
                        if dstatus == 200 and (len(body) != size or hashlib.sha1(body).hexdigest() != sha1):
                            self.bad.append(f"download {key}: {len(body)} bytes, sha1 {hashlib.sha1(body).hexdigest()}")
                elif status not in (None, 612):
                    self.bad.append(f"stat {key}: HTTP {status}")
            self.stop_event.wait(0.1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--short", action="store_true", help="3 kills on 16 MiB files (default: 10 on 64 MiB)")
    ap.add_argument("--bin", help="directory of up-server, biz-server, up-cli (default: release build)")
    ap.add_argument("--kills", type=int)
    ap.add_argument("--size", type=int)
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    kills = args.kills or (3 if args.short else 10)
    size = args.size or ((16 if args.short else 64) << 20)
    rate = "8M"  # JSON progress comes 5 times a second: a kill lands within 1.6 MB of its offset
    lib.install_cleanup()
    bins = lib.bin_dir(args.bin)
    work = tempfile.mkdtemp(prefix="upgate-chaos-server-")
    rnd = random.Random(args.seed)
    started = time.time()
    checks, notes = [], []
    lib.log(SUITE, f"seed {args.seed}, {kills} kills, {size >> 20} MiB files, work {work}")
    cli = os.path.join(bins, "up-cli")
    up = biz = poller = None
    try:
        up = lib.Server("up-server", os.path.join(bins, "up-server"), lib.up_config(work), lib.free_port(),
                        os.path.join(work, "up"), os.path.join(work, "up-server.log")).start()
        biz_port = lib.free_port()
        proxy = lib.CallbackProxy(biz_port)
        biz = lib.Server("biz-server", os.path.join(bins, "biz-server"), lib.biz_config(work), biz_port,
                         os.path.join(work, "biz"), os.path.join(work, "biz-server.log"),
                         env={"UPGATE_UP_HOSTS": up.url,
                              "UPGATE_BIZ_PUBLIC_BASE_URL": f"http://127.0.0.1:{proxy.port}"}).start()
        poller = Poller(up.url)
        poller.start()
        uploads = []
        for i in range(kills):
            kind = KINDS[i % len(KINDS)]
            proto = "v1" if i % 2 == 0 else "v2"
            path = lib.make_file(os.path.join(work, f"f{i}.bin"), size, seed=args.seed * 100 + i)
            etag, sha1 = lib.etag_of(cli, path), lib.sha1_file(path)
            key = f"demo/chaos/server-crash-{args.seed}-{i}.bin"
            poller.watch(key, size, etag, sha1)
            checkpoint = os.path.join(work, f"f{i}.ckpt.json")
            argv = [cli, "put", path, "--key", key, "--biz", biz.url, "--api-key", lib.API_KEY, "--checkpoint",
                    checkpoint, "--protocol", proto, "--concurrency", "2", "--chunk-size", "1M", "--part-size", "4M",
                    "--json", "--limit-rate", rate]
            if kind in ("callback-post", "callback-pre"):
                proxy.arm("post" if kind == "callback-post" else "pre")
            log_offset = os.path.getsize(up.log_path)
            run = lib.CliRun(argv, os.path.join(work, f"f{i}-run0.jsonl"))
            target = rnd.randint(size // 10, size * 7 // 10)
            if kind == "mid-upload":
                hit = run.wait_until(lambda r: (r.last_sent or 0) >= target, timeout=120)
            elif kind == "mkfile":
                # up-server's access log: kill as soon as the last chunk / part is acknowledged
                # (JSON progress is throttled to 5 a second, too coarse for this moment).
                hit = wait_for_chunks(up.log_path, log_offset, proto, size, timeout=120)
            else:
                hit = proxy.hit.wait(120)
            up.kill9()
            moment = f"at {(run.last_sent or 0) / 2**20:.1f} MiB" if kind in ("mid-upload", "mkfile") else "callback held"
            proxy.disarm()
            first_status = run.wait(timeout=120)
            lib.log(SUITE, f"upload {i} ({proto}, {kind}): up-server killed {moment} (hit={hit}); "
                           f"first run exit {first_status}")
            up.start()
            done, runs = (run.event("done") if first_status == 0 else None), 1
            while done is None and runs < 6:
                run = lib.CliRun(argv, os.path.join(work, f"f{i}-run{runs}.jsonl"))
                status = run.wait(timeout=300)
                runs += 1
                done = run.event("done") if status == 0 else None
                if done is None:
                    lib.log(SUITE, f"upload {i} run {runs}: exit {status}: {run.stderr_text().strip()[-300:]}")
            st_status, st = lib.stat(up.url, key)
            dl_status, body = lib.download(up.url, key)
            ok_dl = dl_status == 200 and len(body) == size and hashlib.sha1(body).hexdigest() == sha1
            checks += [
                (f"upload {i} ({proto}, killed {kind}): the kill landed where aimed", bool(hit)),
                (f"upload {i} ({proto}, killed {kind}): the client finished ({runs} runs) with the file's etag",
                 bool(done) and done.get("hash") == etag),
                (f"upload {i}: stat = the file's hash and size", st_status == 200 and st.get("hash") == etag
                 and st.get("fsize") == size),
                (f"upload {i}: the download is byte-exact", ok_dl),
            ]
            reply = (done or {}).get("reply") or {}
            checks.append((f"upload {i}: the client's reply is biz-server's record ({sorted(reply)[:4]})",
                           bool(reply.get("id")) and reply.get("key") == key and reply.get("hash") == etag))
            notes.append(f"{i}:{proto}/{kind}/{runs} runs/reply {'record' if 'id' in reply else sorted(reply)}"
                         f"/last run sent {(done or {}).get('bytesSent', 0) / 2**20:.0f} MiB"
                         f"{' (resumed)' if (done or {}).get('resumed') else ' (started over)'}")
            uploads.append((key, etag))
            poller.unwatch(key)  # checked; keep the poller on the uploads in flight
        # The outbox: every callback delivered, once in effect (bounded wait).
        deadline, records = time.time() + 60, []
        while time.time() < deadline:
            records = lib.biz_records(biz.url) or []
            pending = lib.outbox(up.url, "pending")
            if all(any(r["key"] == k for r in records) for k, _ in uploads) and pending is not None \
                    and not _entries(pending):
                break
            time.sleep(0.5)
        for key, etag in uploads:
            mine = [r for r in records if r["key"] == key]
            checks.append((f"{key}: exactly one biz-server record with the file's hash ({len(mine)})",
                           len(mine) == 1 and mine[0]["hash"] == etag))
        pending, failed = lib.outbox(up.url, "pending"), lib.outbox(up.url, "failed")
        checks.append(("up-server outbox: nothing pending or failed at the end",
                       pending is not None and not _entries(pending) and failed is not None and not _entries(failed)))
        poller.stop_event.set()
        poller.join(timeout=30)
        checks.append((f"no half-written object served ({poller.seen} stats while uploading; "
                       f"{len(poller.bad)} bad: {poller.bad[:3]})", not poller.bad))
        up.stop()
        biz.stop()
    except Exception as e:
        import traceback
        traceback.print_exc()
        checks.append((f"harness error: {e!r}", False))
    extra = f"{kills} up-server kills; " + ", ".join(notes)
    return lib.finish(SUITE, checks, extra, started, args.seed, work, args.keep)


def wait_for_chunks(log_path, offset, proto, size, timeout):
    """Waits until up-server's log (from `offset`) shows every chunk (v1: mkblk/bput of 1 MiB) or
    part (v2: 4 MiB) of the upload acknowledged with 200."""
    import json
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


def _entries(listing):
    if isinstance(listing, list):
        return listing
    for name in ("items", "entries", "callbacks", "outbox"):
        if isinstance(listing.get(name), list):
            return listing[name]
    return []


if __name__ == "__main__":
    sys.exit(main())
