"""net-fault: a loopback TCP proxy between up-cli and up-server that delays, resets mid-body,
truncates and stalls connections (v1, v2 and form uploads).

up-cli's upload host (`--up-host`) is the fault proxy (fault_proxy.py); biz-server (tokens) stays
direct, the callbacks pass the recording callback proxy. The fault proxy adds `Connection: close`
to every request, so one connection carries one request and each request draws its own fate from
a seeded RNG: pass through (most), or one fault:
  delay              latency on every 64 KiB piece both ways, kept under the client's timeout
  reset              RST (SO_LINGER 0) on both sides after N request bytes (head or body)
  truncate-request   the client side closed after N request bytes; up-server sees EOF mid-body
  truncate-response  the whole request forwarded, up-server answered (the work is done), and
                     the client gets only the first N bytes of the reply
  stall-request      forwarding stops after N request bytes for longer than the client's timeout
  stall-response     the reply is held for longer than the client's timeout, then dropped
A request gets a fault with probability --rate (0.4); the requests that finish an upload (mkfile,
v2 complete, form) with at least 0.6, mostly lost replies, since a reply lost after the object was
stored is where a retry could store it twice or deliver its callback twice. The first faults cycle
through every kind (each is injected at least once), the rest are drawn by weight. up-cli runs
with a short `--timeout` and its own `--retries`; when it still exits with a retryable error
(network, 408/429, retryable 5xx) the same command runs again from its checkpoint (counted and
printed). Checks: every upload finishes; up-cli's hash = the official SDK's `qiniu.etag` of the
file = up-server's stat; the download equals the file; exactly one biz-server record per upload,
with the file's hash; every callback delivered until answered and never again (the callback
proxy's log, biz-server's counters); no checkpoint left; the outbox drained; up-server alive and
its log free of errors (network faults are the clients' doing); and, read from up-server's index,
every stored object is one of the suite's uploads with the right hash and size (nothing else,
nothing corrupt). Printed: faults by kind and by request, re-runs, request body bytes forwarded
minus the file sizes ("re-sent").
"""
import collections
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import chaoslib as lib
import harness as h
from fault_proxy import KINDS, FaultProxy

SUITE = "net-fault"
# Statuses RetryPolicy retries (qiniu-protocol.md §8): 408, 429, and 5xx/6xx except these.
FINAL = {501, 509, 573, 579, 608, 612, 614, 616, 618, 630, 631, 632, 640, 701}
WEIGHTS = {"delay": 3, "reset": 3, "truncate-request": 2, "truncate-response": 3, "stall-request": 1,
           "stall-response": 1}


def retryable(kind):
    if kind == "network":
        return True
    m = re.fullmatch(r"server (\d+)", kind or "")
    if not m:
        return False
    status = int(m.group(1))
    return status in (408, 429) or (status >= 500 and status not in FINAL)


class Upload:
    def __init__(self, proto, index, size, key, path):
        self.proto, self.index, self.size, self.key, self.path = proto, index, size, key, path
        self.done, self.local, self.reruns, self.failure, self.hang = None, None, 0, None, False
        self.rerun_reasons = []
        self.stat_ok = self.download_ok = False
        self.checkpoint_left = False
        self.seconds = 0.0


def plan_uploads(suite, protocols):
    """v1 and v2 of --size, form uploads of 64 KiB-4 MiB, interleaved so parallel runs mix them."""
    args, rnd = suite.args, random.Random(suite.args.seed ^ 0x5EED)
    uploads = []
    for proto in protocols:
        for i in range(args.forms if proto == "form" else args.uploads):
            size = rnd.randint(64 << 10, 4 << 20) if proto == "form" else args.size
            key = f"demo/chaos/net-fault-{args.seed}-{proto}-{i}.bin"
            uploads.append(Upload(proto, i, size, key, os.path.join(suite.work, f"{proto}-{i}.bin")))
    uploads.sort(key=lambda u: (u.index, protocols.index(u.proto)))
    return uploads


def run_upload(suite, u, bins, chain, fault):
    """The same command until it finishes (re-run after a retryable exit, bounded), then stat and
    download straight from up-server (not through the proxy)."""
    args = suite.args
    checkpoint = os.path.join(suite.work, f"{u.proto}-{u.index}.ckpt.json")
    argv = lib.put_argv(bins, u.path, u.key, chain.biz, checkpoint, u.proto, "--up-host", fault.url,
                        "--timeout", str(args.timeout), "--retries", str(args.retries),
                        "--concurrency", str(args.concurrency))
    argv += {"v1": ["--chunk-size", str(args.chunk)], "v2": ["--part-size", str(args.part)]}.get(u.proto, [])
    started = time.time()
    u.local = h.etag(u.path)  # v2 in 4 MiB parts: the plain etag
    for attempt in range(args.max_reruns + 1):
        run = lib.CliRun(argv, os.path.join(suite.work, f"{u.proto}-{u.index}-run{attempt}.jsonl"))
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
    st_status, st = h.stat(chain.up.url, u.key)
    u.stat_ok = st_status == 200 and st.get("hash") == u.local and st.get("fsize") == u.size
    dl_status, body = h.download(chain.up.url, u.key)
    with open(u.path, "rb") as f:
        u.download_ok = dl_status == 200 and body == f.read()
    os.remove(u.path)


def run_all(suite, chain, bins, fault, uploads):
    """--parallel workers take the uploads in order; returns the harness errors."""
    queue, lock, errors = list(uploads), threading.Lock(), []

    def worker():
        while True:
            with lock:
                if not queue:
                    return
                u = queue.pop(0)
            try:
                h.make_file(u.path, u.size, seed=(suite.args.seed * 1000003 + hash(u.key)) & 0xFFFFFFFF)
                run_upload(suite, u, bins, chain, fault)
            except Exception as e:
                errors.append(f"{u.key}: {e!r}")
                u.failure = u.failure or f"harness: {e!r}"
            suite.log(f"{u.proto} #{u.index} ({u.size / 2**20:.1f} MiB): "
                      f"{'ok' if u.done and u.done.get('hash') == u.local else 'FAILED ' + str(u.failure)} "
                      f"in {u.seconds:.1f} s, {u.reruns} re-runs; faults so far {dict(fault.faults)}")

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(suite.args.parallel)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(1, suite.args.hang_seconds * (len(uploads) + 1)))
    return errors


# Outbox states that mean "not delivered yet, or given up on" in either schema (the first
# `outbox` table: pending / failed; its successor `callback_outbox`: pending / claimed / dead).
UNDELIVERED = ("pending", "claimed", "failed", "dead")


def stored_objects(data_dir):
    """(key, etag, fsize, segment bytes) of every object in up-server's index, and the outbox's
    rows by state (from whichever outbox table the schema has)."""
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


class ServerLog:
    """Levels, error lines, warnings and answered statuses of up-server's log."""

    def __init__(self, path):
        self.levels, self.errors, self.warnings, self.statuses = (collections.Counter(), [], collections.Counter(),
                                                                  collections.Counter())
        with open(path, errors="replace") as f:
            for line in f:
                m = re.search(r'"level":"([a-z]+)"', line)
                level = m.group(1) if m else "?"
                self.levels[level] += 1
                msg = (re.search(r'"msg":"([^"]*)"', line) or [None, "?"])[1]
                if level in ("error", "critical"):
                    self.errors.append(line.strip()[:300])
                elif level == "warning":
                    self.warnings[msg] += 1
                m = re.search(r'"msg":"request".*?"status":(\d+)', line)
                if m:
                    self.statuses[int(m.group(1))] += 1


def collect(suite, chain, fault):
    """Once the uploads are done: the outbox drained (bounded wait), the records, the index, the
    log; up-server stopped without waiting out its grace for connections the proxy cut."""
    suite.log("uploads done; waiting for the outbox")
    deadline = time.time() + 60
    while time.time() < deadline and not h.outbox_idle(chain.up.url):
        time.sleep(0.5)
    state = {"outbox_idle": h.outbox_idle(chain.up.url), "records": h.biz_records(chain.biz.url) or [],
             "received": h.metric(chain.up.url, "upgate_up_bytes_received_total") or 0.0,
             "up_alive": chain.up.alive()}
    # Read while up-server runs (SQLite WAL: a reader is fine), then stop it without waiting out its
    # 10 s shutdown grace for requests whose cut connection it has not noticed yet.
    state["objects"], state["outbox_states"] = stored_objects(chain.up.data_dir)
    fault.close()
    chain.up.process.send_signal(signal.SIGTERM)
    try:
        chain.up.process.wait(timeout=2)
    except subprocess.TimeoutExpired:
        chain.up.kill9()
    state["log"] = ServerLog(chain.up.log_path)
    return state


def check_protocols(suite, state, uploads, protocols):
    by_key = collections.defaultdict(list)
    for r in state["records"]:
        by_key[r.get("key")].append(r)
    for proto in protocols:
        mine = [u for u in uploads if u.proto == proto]
        finished = [u for u in mine if u.done]
        reruns = sum(u.reruns for u in mine)
        suite.check(f"{proto}: every upload finished through retries ({len(finished)}/{len(mine)}, {reruns} re-runs "
                    f"of up-cli)" + "".join(f"; {u.key}: {u.failure}" for u in mine if u.failure),
                    len(finished) == len(mine))
        suite.check(f"{proto}: no up-cli run hung (each ended within {suite.args.hang_seconds} s)",
                    not any(u.hang for u in mine))
        suite.check(f"{proto}: up-cli hash == qiniu.etag of the file for every upload",
                    all(u.done and u.done.get("hash") == u.local and u.done.get("size") == u.size for u in mine))
        suite.check(f"{proto}: up-server stat hash/fsize == the file's for every upload", all(u.stat_ok for u in mine))
        suite.check(f"{proto}: every download equals its file", all(u.download_ok for u in mine))
        suite.check(f"{proto}: exactly one biz-server record per upload, with the file's hash",
                    all(len(by_key[u.key]) == 1 and by_key[u.key][0].get("hash") == u.local
                        and by_key[u.key][0].get("fsize") == u.size for u in mine))
        suite.check(f"{proto}: no checkpoint left after success", not any(u.checkpoint_left for u in mine))
        if reruns:
            reasons = collections.Counter(r.split(":")[0] for u in mine for r in u.rerun_reasons)
            suite.note(f"{proto}: {reruns} re-runs after up-cli exited with a retryable error after "
                       f"{suite.args.retries} retries: {dict(reasons)}; e.g. "
                       f"{[r for u in mine for r in u.rerun_reasons][:2]}")
    return by_key


def check_server(suite, chain, state, uploads, fault, by_key):
    expected = {u.key: (u.local, u.size) for u in uploads}
    stored = {k: (e, f, seg) for k, e, f, seg in state["objects"]}
    wrong = [k for k, (e, f, seg) in stored.items() if k not in expected or expected[k] != (e, f) or seg != f]
    missing = [k for k in expected if k not in stored]
    log = state["log"]
    suite.check(f"nothing corrupt stored: up-server's index holds exactly the {len(expected)} uploads, each with its "
                f"file's hash and size and segments summing to it"
                + (f" (wrong {wrong[:3]}, missing {missing[:3]})" if wrong or missing else ""),
                not wrong and not missing and len(stored) == len(expected))
    left = {k: n for k, n in state["outbox_states"].items() if k in UNDELIVERED and n}
    suite.check(f"up-server outbox drained: nothing pending or failed (admin API and index: {left or 'none'})",
                state["outbox_idle"] and not left)
    suite.check("no record at biz-server besides the suite's uploads", set(by_key) <= set(expected))
    # A form upload repeated after its reply was lost is a second upload (and callback); a repeated
    # mkfile / complete is not.
    lib.check_delivered_once(suite, chain, list(expected), uploads=dict(fault.form_completions))
    suite.check("up-server alive after every fault (no crash)", state["up_alive"])
    suite.check("up-server logged no error (network faults are the clients' doing)"
                + (f": {len(log.errors)}, e.g. {log.errors[:2]}" if log.errors else ""), not log.errors)
    suite.check(f"every fault kind injected at least once ({', '.join(KINDS)})", all(fault.faults[k] for k in KINDS))
    suite.check("the proxy itself had no internal error" + (f": {fault.errors[:3]}" if fault.errors else ""),
                not fault.errors)


def totals(suite, state, uploads, fault, protocols):
    log = state["log"]
    per_type = collections.defaultdict(dict)
    for (rtype, kind), count in sorted(fault.by_request.items()):
        per_type[rtype][kind] = count
    suite.log(f"requests through the proxy: {dict(fault.requests)}")
    suite.log(f"faults by request: {dict(per_type)}")
    suite.log(f"up-server answered (access log): {dict(sorted(log.statuses.items()))}; log levels {dict(log.levels)}; "
              f"warnings {dict(log.warnings)}")
    if log.warnings:
        suite.note(f"up-server warnings: {dict(log.warnings)} (a handler timeout is the known limit: a connection "
                   f"closed mid-body while its body read is paused is noticed at the 30 s handler timeout)")
    data_total = sum(u.size for u in uploads)
    lost = {t: sum(fault.by_request[(t, k)] for k in ("truncate-response", "stall-response"))
            for t in ("mkfile", "v2-complete", "form")}
    return [
        f"{sum(fault.faults.values())} faults in {sum(fault.requests.values())} requests "
        f"({', '.join(f'{k} {fault.faults[k]}' for k in KINDS)})",
        f"{sum(lost.values())} replies lost after the server stored the object "
        f"(mkfile {lost['mkfile']}, v2 complete {lost['v2-complete']}, form {lost['form']})",
        f"up-server answered 701 x {log.statuses[701]} (stale ctx after a lost bput reply), "
        f"599 x {log.statuses[599]} (a bput taken over by its retry), 503 x {log.statuses[503]}",
        f"{len(uploads)} uploads ({', '.join(f'{p} {sum(1 for u in uploads if u.proto == p)}' for p in protocols)}), "
        f"{sum(u.reruns for u in uploads)} up-cli re-runs",
        f"re-sent {(fault.data_bytes - data_total) / 2**20:.1f} MiB (forwarded {fault.data_bytes / 2**20:.1f} MiB of "
        f"data requests for {data_total / 2**20:.1f} MiB of files; up-server received "
        f"{(state['received'] - state['received_before']) / 2**20:.1f} MiB)",
    ]


def parse_args():
    ap = h.suite_arguments(__doc__, "2 x 16 MiB per protocol + 3 form uploads (default: 8 x 64 MiB per protocol "
                                    "+ 16 form)")
    ap.add_argument("--uploads", type=int, help="uploads per protocol (v1, v2)")
    ap.add_argument("--size", type=int, help="bytes per v1/v2 upload")
    ap.add_argument("--forms", type=int, help="form uploads (files of 64 KiB-4 MiB)")
    ap.add_argument("--rate", type=float, default=0.4, help="share of requests given a fault (default 0.4)")
    ap.add_argument("--timeout", type=float, help="up-cli --timeout (default 3 short, 4 full)")
    ap.add_argument("--retries", type=int, default=4, help="up-cli --retries (default 4)")
    ap.add_argument("--parallel", type=int, help="uploads at once (default 3)")
    ap.add_argument("--protocols", default="v1,v2,form")
    args = h.short_or_full(ap.parse_args(), uploads=(2, 8), size=(16 << 20, 64 << 20), forms=(3, 16),
                           timeout=(3.0, 4.0), parallel=(3, 3))
    # v1 in 1 MiB chunks (4 per block: bput, and 701 after a lost bput reply); v2 in 4 MiB parts
    # (its hash is then the plain etag).
    args.concurrency, args.chunk, args.part = 4, 1 << 20, 4 << 20
    args.max_reruns, args.hang_seconds = 10, (60 if args.short else 300)
    return args


def main():
    args = parse_args()
    protocols = args.protocols.split(",")
    suite = h.Suite(SUITE, args, "upgate-chaos-net-")
    bins = suite.bins
    suite.log(f"seed {args.seed}, {args.uploads} x {args.size >> 20} MiB per protocol + {args.forms} form, fault "
              f"rate {args.rate}, up-cli --timeout {args.timeout} --retries {args.retries}, work {suite.work}")
    fault, extra = None, []
    with suite:
        chain = lib.Chain(suite, bins)
        fault = FaultProxy(chain.up.port, args.seed, args.rate, args.timeout, WEIGHTS)
        received_before = h.metric(chain.up.url, "upgate_up_bytes_received_total") or 0.0
        uploads = plan_uploads(suite, protocols)
        errors = run_all(suite, chain, bins, fault, uploads)
        state = collect(suite, chain, fault)
        state["received_before"] = received_before
        by_key = check_protocols(suite, state, uploads, protocols)
        check_server(suite, chain, state, uploads, fault, by_key)
        if errors:
            suite.check(f"harness errors: {errors[:3]}", False)
        extra = totals(suite, state, uploads, fault, protocols)
        chain.biz.stop()
        chain.proxy.close()
    if fault:
        fault.close()
    return suite.finish(" | ".join(extra))


if __name__ == "__main__":
    sys.exit(main())
