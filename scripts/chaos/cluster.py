"""cluster: uploads through nginx in front of two up-servers and two biz-servers on PostgreSQL and
SeaweedFS (harness.cluster), while one up-server and one biz-server are kill -9'd and restarted in
turn and PostgreSQL is restarted once (pg_ctl restart -m fast).

Uploads mix form, v1 and v2, half through up-cli (its checkpoint: a failed run is run again), half
through the official SDK (`put_data`, `put_file` v1 / v2 with a resume recorder), sizes 1 MiB to
--max-size, a few at a time. A client run that fails (an instance died under it, 502 from nginx,
503 while PostgreSQL restarts) is run again, at most 6 times: the app's retry.

Checks: every upload finished with the etag the official SDK computes (`qiniu.etag`; v2 in 4 MiB
parts is the same hash); each object downloads byte-exact from EACH up-server directly; exactly one
biz-server record per upload with that hash; each record's webhook received (a receiver in the
suite, `standardwebhooks` verifies each) under the record's id as webhook-id, redeliveries after a
kill carrying the same id (at least once; the app keeps the first of each id); the outbox has nothing pending or
failed; every object in the index downloads whole (no row without its blob); after the grace period
(`orphanGraceSeconds` 2) and POST /admin/sweep, no object in the S3 bucket that the index does not
name.
"""
import hashlib
import json
import os
import random
import sys
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import qiniu
from qiniu import Region, put_data, put_file

import chaoslib as lib
import harness as h
from harness.cluster import Cluster
from harness.webhooks import Receiver

warnings.filterwarnings("ignore", category=DeprecationWarning)  # put_file: v1 and v2 both, on purpose
SUITE = "cluster"
KINDS = ["form", "v1", "v2"]
SECRET = "whsec_" + "Y2x1c3Rlci1jaGFvcy13ZWJob29rLXNlY3JldA=="
GRACE = 2


class Upload:
    def __init__(self, suite, i, rnd):
        args = suite.args
        self.i, self.kind = i, KINDS[i % 3]
        self.client = "up-cli" if (i // 3) % 2 == 0 else "sdk"
        self.size = rnd.randint(1 << 20, args.max_size)
        self.path = h.make_file(os.path.join(suite.work, f"f{i}.bin"), self.size, seed=args.seed * 1000 + i)
        self.etag, self.sha1 = h.etag(self.path), h.sha1_file(self.path)
        self.key = f"demo/chaos/cluster-{args.seed}-{i}.bin"
        self.runs, self.hash, self.errors = 0, None, []
        self.work = suite.work


def token(cluster, key, size):
    status, _, body = h.request(cluster.biz, "POST", "/v1/uptoken", json.dumps({"key": key, "fsize": size}).encode(),
                                {"Authorization": "Bearer " + h.API_KEY, "Content-Type": "application/json"},
                                timeout=30)
    if status != 200:
        raise RuntimeError(f"token: HTTP {status} {body[:200]!r}")
    return json.loads(body)["uptoken"]


def run_cli(suite, cluster, u):
    argv = lib.put_argv(suite.bins, u.path, u.key, SimpleNamespace(url=cluster.biz),
                        os.path.join(u.work, f"f{u.i}.ckpt.json"), u.kind, "--concurrency", "2",
                        "--chunk-size", "1M", "--part-size", "4M", "--limit-rate", suite.args.rate,
                        "--retries", "8", "--timeout", "20")
    run = lib.CliRun(argv, os.path.join(u.work, f"f{u.i}-run{u.runs}.jsonl"))
    status = run.wait(timeout=300)
    done = run.event("done") if status == 0 else None
    if done is None:
        raise RuntimeError(f"up-cli exit {status}: {run.first_error_line(status)}")
    return done.get("hash")


def run_sdk(suite, cluster, u):
    regions = [Region(up_host=cluster.up)]
    tok = token(cluster, u.key, u.size)
    if u.kind == "form":
        with open(u.path, "rb") as f:
            ret, info = put_data(tok, u.key, f.read(), regions=regions)
    else:  # resumable whatever the size (the SDK's threshold is lowered in main)
        records = os.path.join(u.work, f"rec{u.i}")
        os.makedirs(records, exist_ok=True)  # the recorder writes into it, and does not make it
        ret, info = put_file(tok, u.key, u.path, regions=regions, version=u.kind, part_size=4 << 20,
                             bucket_name=h.BUCKET, upload_progress_recorder=qiniu.UploadProgressRecorder(records))
    if info.status_code != 200 or not ret:
        raise RuntimeError(f"SDK {u.kind}: HTTP {info.status_code} {str(getattr(info, 'error', ''))[:200]}")
    return ret.get("hash")


def one_upload(suite, cluster, u):
    """The upload, run again after a failure (at most 6 runs in all), waiting 1, 2, 4, 8, 8 s
    between runs as an app would back off: when both instances of a side were killed within
    nginx's fail_timeout (10 s), nginx answers 502 "no live upstreams" for up to 10 s even after
    they are back, longer than five runs one second apart."""
    while u.hash is None and u.runs < 6:
        u.runs += 1
        try:
            u.hash = (run_cli if u.client == "up-cli" else run_sdk)(suite, cluster, u)
        except Exception as error:  # noqa: BLE001 - a failed run is run again, and counted
            u.errors.append(" ".join(str(error).split())[:200])  # one line (nginx 502 pages are HTML)
            time.sleep(min(8, 2 ** (u.runs - 1)))
    return u


class Chaos(threading.Thread):
    """Every `period` s the next event: kill -9 + restart of up-server k, then of biz-server k
    (k alternating), PostgreSQL restarted once halfway through the planned events."""

    def __init__(self, suite, cluster, period, events):
        super().__init__(daemon=True)
        self.suite, self.cluster, self.period = suite, cluster, period
        plan = []
        for n in range(events):
            side = "up" if n % 2 == 0 else "biz"
            plan.append((side, (n // 2) % 2))
        plan.insert(len(plan) // 2, ("postgres", 0))
        self.plan, self.done, self.errors, self.in_flight = plan, [], [], 0
        self.stop_event, self.uploading = threading.Event(), threading.Event()

    def run(self):
        for side, k in self.plan:
            if self.stop_event.wait(self.period):
                return
            try:
                if side == "postgres":
                    started = time.time()
                    self.cluster.pg_restart()
                    self.done.append(f"PostgreSQL restarted ({time.time() - started:.1f} s)")
                else:
                    server = (self.cluster.ups if side == "up" else self.cluster.bizs)[k]
                    server.kill9()
                    time.sleep(0.5)
                    server.start(timeout=60)
                    self.done.append(f"{server.name} kill -9 + restart")
                self.in_flight += 1 if self.uploading.is_set() else 0
                self.suite.log(self.done[-1])
            except Exception as error:  # noqa: BLE001 - reported as a failed check
                self.errors.append(f"{side} {k}: {error}")


def sweep(cluster):
    """POST /admin/sweep (management-signed) on one up-server: (status, JSON or None)."""
    path = "/admin/sweep"
    status, _, body = h.request(cluster.ups[0].url, "POST", path, b"",
                                {"Authorization": h.qbox_authorization(path),
                                 "Content-Type": h.FORM}, timeout=120)
    try:
        return status, json.loads(body)
    except ValueError:
        return status, None


def check_store(suite, cluster):
    """No row without its blob; with the sweep, no store object the index does not name."""
    objects = cluster.psql("SELECT object_key, fsize FROM objects WHERE bucket = 'demo'")
    missing = []
    for key, fsize in objects:
        status, body = h.download(cluster.up, key)
        if status != 200 or len(body) != int(fsize):
            missing.append(f"{key}: {status} {len(body)}/{fsize}")
    suite.check(f"no row without its blob: every object in the index downloads whole through nginx "
                f"({len(objects) - len(missing)}/{len(objects)}; {missing[:3]})", objects and not missing)
    names = cluster.store_objects()
    stored = {n.split("/")[1] for n in names if n.count("/") >= 2}
    segments = {r[0] for r in cluster.psql("SELECT DISTINCT blob FROM segments")}
    suite.check(f"every blob an object names is in the S3 bucket ({len(segments - stored)} of {len(segments)} "
                f"missing)", segments and not (segments - stored))
    time.sleep(GRACE + 1)
    status, answer = sweep(cluster)
    suite.check(f"POST /admin/sweep answered 200 with its counts ({status} {answer})",
                status == 200 and isinstance(answer, dict) and "orphans" in answer)
    names = cluster.store_objects()
    indexed = cluster.indexed_blobs()
    orphans = sorted({n.split("/")[1] for n in names if n.count("/") >= 2} - indexed)
    suite.check(f"no orphan store object after the sweep ({len(names)} objects, {len(orphans)} of blobs the index "
                f"does not name: {orphans[:3]})", not orphans)
    return f"sweep {answer}, {len(names)} store objects, 0 orphans" if not orphans else f"{len(orphans)} orphans"


UPLOAD_ROUTES = ("/mkblk/", "/bput/", "/mkfile/", "/buckets/")


def access_log(server):
    """(method, path, status) of every request in an instance's log (across its restarts)."""
    out = []
    with open(server.log_path, "rb") as f:
        for line in f:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("msg") == "request":
                out.append((entry.get("method"), entry.get("path", ""), entry.get("status")))
    return out


def check_spread(suite, cluster):
    """Round robin really spread the uploads, and no instance refused another's ctx or upload."""
    served, refused = {}, {}
    for server in cluster.ups:
        requests = [r for r in access_log(server) if r[1].startswith(UPLOAD_ROUTES) or r[1] == "/"]
        served[server.name] = len(requests)
        refused[server.name] = sum(1 for r in requests if r[2] in (701, 612))
    suite.check(f"every up-server served upload requests through nginx ({served})", all(served.values()))
    suite.check(f"no upload request refused with 701/612 by any instance: a ctx, block or part made on one is "
                f"used on the other ({refused})", not any(refused.values()))


def check_all(suite, cluster, receiver, uploads):
    finished = [u for u in uploads if u.hash == u.etag]
    wrong = [f"{u.i}:{u.client}/{u.kind}:{u.hash}:{u.errors[-1:]}" for u in uploads if u.hash != u.etag]
    suite.check(f"every upload finished with the official SDK's etag ({len(finished)}/{len(uploads)}; {wrong[:3]})",
                not wrong)
    for server in cluster.ups:
        bad = []
        for u in uploads:
            status, body = h.download(server.url, u.key)
            if status != 200 or hashlib.sha1(body).hexdigest() != u.sha1:
                bad.append(f"{u.key}: {status}, {len(body)} bytes")
        suite.check(f"every object downloads byte-exact from {server.name} directly ({len(uploads) - len(bad)}/"
                    f"{len(uploads)}; {bad[:2]})", not bad)
    keys = [u.key for u in uploads]
    deadline, records = time.time() + 60, []
    while time.time() < deadline:
        records = h.biz_records(cluster.biz) or []
        ids = {r["id"] for r in records}
        got = {a["id"] for a in receiver.snapshot() if a["verified"] and a["status"] == 204}
        if set(keys) <= {r["key"] for r in records} and ids <= got and h.outbox_idle(cluster.up):
            break
        time.sleep(0.5)
    lib.check_records(suite, records, {u.key: u.etag for u in uploads})
    attempts = receiver.snapshot()
    per_id = {}
    for a in attempts:
        if a["verified"] and a["status"] == 204:
            per_id.setdefault(a["id"], []).append(a["key"])
    # Webhooks are at least once (Standard Webhooks): a biz-server killed after the receiver's 204
    # and before it recorded the delivery leaves the claim to expire, and another instance sends
    # the same message again under the same webhook-id, which is how the app recognises it. So
    # the app receives each record's event once when it keeps the first of each webhook-id:
    # every record has verified deliveries, all of them its own key; repeats are counted.
    wrong = [f"{r['key']}: {len(per_id.get(r['id'], []))}" for r in records
             if not per_id.get(r["id"]) or set(per_id[r["id"]]) != {r["key"]}]
    repeated = {r["key"]: len(per_id[r["id"]]) for r in records if len(per_id.get(r["id"], [])) > 1}
    unverified = [a for a in attempts if not a["verified"]]
    suite.check(f"each record's event received by the app once per webhook-id ({len(records) - len(wrong)}/"
                f"{len(records)}; {len(attempts)} requests; redelivered after a kill under the same id: "
                f"{repeated or 'none'}; wrong: {wrong[:3]})", records and not wrong)
    suite.check(f"every webhook request verified by standardwebhooks ({len(unverified)} not)", not unverified)
    suite.check(f"no webhook for a record that does not exist ({sorted(set(per_id) - {r['id'] for r in records})[:3]})",
                set(per_id) <= {r["id"] for r in records})
    suite.check("up-server outbox (shared): nothing pending or failed, seen from every instance",
                all(h.outbox_idle(s.url) for s in cluster.ups))


def parse_args():
    ap = h.suite_arguments(__doc__, "20 uploads of 1-6 MiB, 5 kills (default: 200 of 1-64 MiB, 12 kills)")
    ap.add_argument("--uploads", type=int)
    ap.add_argument("--max-size", type=int)
    ap.add_argument("--kills", type=int, help="kill -9 events (up and biz in turn)")
    ap.add_argument("--period", type=float, help="seconds between chaos events")
    ap.add_argument("--parallel", type=int, default=4, help="uploads in flight")
    ap.add_argument("--rate", default="8M", help="up-cli's --limit-rate")
    return h.short_or_full(ap.parse_args(), uploads=(20, 200), max_size=(6 << 20, 64 << 20), kills=(4, 12),
                           period=(2.0, 15.0))


def main():
    args = parse_args()
    suite = h.Suite(SUITE, args, "upgate-chaos-cluster-")
    bins = suite.bins
    rnd = random.Random(args.seed)
    # SDK v1 / v2 uploads are resumable from 1 byte on, not form uploads below its 4 MiB default.
    qiniu.config.set_default(default_upload_threshold=1)
    figures = ""
    with suite:
        receiver = Receiver({"/hook": SECRET}).start()

        def biz_change(config):
            config["webhooks"] = [{"url": receiver.url("/hook"), "secrets": [SECRET], "timeoutSeconds": 2,
                                   "retryScheduleSeconds": [0, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2],
                                   "allowPrivateTargets": True}]

        def up_change(config):
            config["orphanGraceSeconds"] = GRACE
        cluster = Cluster(bins, suite.work, 2, 2, up_change=up_change, biz_change=biz_change).start()
        suite.log(f"seed {args.seed}: cluster up in {cluster.seconds_to_start:.1f} s (up {cluster.up}, biz {cluster.biz}); "
                  f"{args.uploads} uploads of 1-{args.max_size >> 20} MiB, {args.kills} kills every {args.period} s")
        uploads = [Upload(suite, i, rnd) for i in range(args.uploads)]
        chaos = Chaos(suite, cluster, args.period, args.kills)
        started = time.time()
        chaos.uploading.set()
        chaos.start()
        with ThreadPoolExecutor(args.parallel) as pool:
            list(pool.map(lambda u: one_upload(suite, cluster, u), uploads))
        upload_seconds = time.time() - started
        chaos.uploading.clear()
        chaos.join(timeout=args.period * (len(chaos.plan) + 2) + 120)
        chaos.stop_event.set()
        suite.check(f"every chaos event happened ({len(chaos.done)}/{len(chaos.plan)}: {chaos.errors[:2]})",
                    len(chaos.done) == len(chaos.plan) and not chaos.errors)
        check_all(suite, cluster, receiver, uploads)
        check_spread(suite, cluster)
        store = check_store(suite, cluster)
        cluster.stop()
        reruns = {c: sum(u.runs - 1 for u in uploads if u.client == c) for c in ("up-cli", "sdk")}
        worst = max(uploads, key=lambda u: u.runs)
        reruns = (f"client re-runs: up-cli {reruns['up-cli']}, SDK {reruns['sdk']} (most: {worst.runs - 1} for "
                  f"{worst.client} {worst.kind}{', last error ' + worst.errors[-1][:80] if worst.errors else ''})")
        mib = sum(u.size for u in uploads) / 2**20
        figures = (f"{len(uploads)} uploads ({mib:.0f} MiB; form/v1/v2 x up-cli/SDK) in {upload_seconds:.0f} s through "
                   f"nginx over 2 up + 2 biz; {', '.join(chaos.done) or 'no chaos'} ({chaos.in_flight} of them while "
                   f"uploads ran); {reruns}; {store}")
    return suite.finish(figures)


if __name__ == "__main__":
    sys.exit(main())
