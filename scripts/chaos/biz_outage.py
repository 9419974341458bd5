"""biz-outage: biz-server is down (kill -9, then restarted on the same port and data dir) while
uploads finish; the up-server outbox must deliver every callback once biz-server is back.

N small uploads (`up-cli put --token`, form) with tokens made by the official Qiniu SDK
(qiniu.Auth.upload_token) whose callbackUrl is biz-server's /v1/callback and whose callbackBody is
the one biz-server signs into its own tokens. They are launched evenly over 2 x the outage, the
outage covering the middle half. up-server runs from a temp config with short callback retry
delays (base 1 s, max 2 s, 2 s timeout). During the outage the synchronous callback fails and the
client gets 579 (counted; the object is stored). After biz-server returns, a bounded wait for the
outbox; then every upload has exactly one record with its hash, nothing is pending or failed in
the outbox, and every object stats with the right hash.
"""
import argparse
import os
import random
import sys
import tempfile
import threading
import time

from qiniu import Auth

import chaoslib as lib

SUITE = "biz-outage"
CALLBACK_BODY = ("bucket=$(bucket)&key=$(key)&hash=$(etag)&fsize=$(fsize)&mimeType=$(mimeType)&fname=$(fname)"
                 "&endUser=$(endUser)&clientId=demo&traceId=chaos-{i}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--short", action="store_true", help="20 uploads, 8 s outage (default: 100, 30 s)")
    ap.add_argument("--bin", help="directory of up-server, biz-server, up-cli (default: release build)")
    ap.add_argument("--uploads", type=int)
    ap.add_argument("--outage", type=float)
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    n = args.uploads or (20 if args.short else 100)
    outage = args.outage or (8.0 if args.short else 30.0)
    lib.install_cleanup()
    bins = lib.bin_dir(args.bin)
    work = tempfile.mkdtemp(prefix="upgate-chaos-biz-")
    rnd = random.Random(args.seed)
    started = time.time()
    checks = []
    lib.log(SUITE, f"seed {args.seed}, {n} uploads, {outage:.0f} s outage, work {work}")
    cli = os.path.join(bins, "up-cli")
    extra = ""
    try:
        up = lib.Server("up-server", os.path.join(bins, "up-server"), lib.up_config(work, retry_base=1, retry_max=2),
                        lib.free_port(), os.path.join(work, "up"), os.path.join(work, "up-server.log")).start()
        biz = lib.Server("biz-server", os.path.join(bins, "biz-server"), lib.biz_config(work), lib.free_port(),
                         os.path.join(work, "biz"), os.path.join(work, "biz-server.log"),
                         env={"UPGATE_UP_HOSTS": up.url}).start()
        auth = Auth(lib.AK, lib.SK)
        uploads = []
        for i in range(n):
            path = lib.make_file(os.path.join(work, f"s{i}.bin"), rnd.randint(1, 256 << 10), seed=args.seed * 1000 + i)
            key = f"demo/chaos/biz-outage-{args.seed}-{i}.bin"
            token = auth.upload_token(lib.BUCKET, key, 3600, {
                "callbackUrl": biz.url + "/v1/callback", "callbackBody": CALLBACK_BODY.format(i=i),
                "callbackBodyType": "application/x-www-form-urlencoded"})
            uploads.append({"i": i, "path": path, "key": key, "token": token, "etag": lib.etag_of(cli, path)})
        window = 2 * outage
        outage_start, outage_end = window / 4, window / 4 + outage
        t0 = time.time()
        results = {}

        def upload(u):
            argv = [cli, "put", u["path"], "--key", u["key"], "--token", u["token"], "--up-host", up.url,
                    "--no-checkpoint", "--json"]
            run = lib.CliRun(argv, os.path.join(work, f"s{u['i']}.jsonl"))
            status = run.wait(timeout=120)
            error = run.event("error") or {}
            results[u["i"]] = (status, run.event("done"), error.get("message", ""), time.time() - t0)

        threads, outage_done, outage_span = [], False, None
        for u in uploads:
            launch_at = t0 + u["i"] * window / n
            while time.time() < launch_at:
                now = time.time() - t0
                if outage_span is None and now >= outage_start:
                    biz.kill9()
                    outage_span = [now, None]
                    lib.log(SUITE, f"biz-server killed at t={now:.1f} s")
                if outage_span and outage_span[1] is None and now >= outage_end:
                    biz.start()
                    outage_span[1] = time.time() - t0
                    lib.log(SUITE, f"biz-server back at t={outage_span[1]:.1f} s")
                time.sleep(0.02)
            thread = threading.Thread(target=upload, args=(u,))
            thread.start()
            threads.append(thread)
        while outage_span is None or outage_span[1] is None:
            now = time.time() - t0
            if outage_span is None and now >= outage_start:
                biz.kill9()
                outage_span = [now, None]
            if outage_span and outage_span[1] is None and now >= outage_end:
                biz.start()
                outage_span[1] = time.time() - t0
                lib.log(SUITE, f"biz-server back at t={outage_span[1]:.1f} s")
            time.sleep(0.02)
        for thread in threads:
            thread.join(timeout=180)
        ok = [i for i, (s, d, _, _) in results.items() if s == 0 and d]
        got579 = [i for i, (s, _, m, _) in results.items() if s != 0 and "579" in m]
        other = {i: (s, m[:160]) for i, (s, _, m, _) in results.items() if s != 0 and "579" not in m}
        lib.log(SUITE, f"clients: {len(ok)} ok, {len(got579)} got 579, {len(other)} other failures {other}")
        back = t0 + outage_span[1]
        deadline, records = time.time() + 60, []
        keys = {u["key"]: u["etag"] for u in uploads}
        while time.time() < deadline:
            records = lib.biz_records(biz.url) or []
            have = {r["key"] for r in records}
            pending = lib.outbox(up.url, "pending")
            if set(keys) <= have and pending is not None and not pending.get("items"):
                break
            time.sleep(0.25)
        waited = time.time() - back  # since biz-server came back
        by_key = {}
        for r in records:
            if r["key"] in keys:
                by_key.setdefault(r["key"], []).append(r)
        missing = [k for k in keys if k not in by_key]
        twice = [k for k, rs in by_key.items() if len(rs) != 1]
        wrong = [k for k, rs in by_key.items() if any(r["hash"] != keys[k] for r in rs)]
        pending, failed = lib.outbox(up.url, "pending"), lib.outbox(up.url, "failed")
        bad_stat = [u["key"] for u in uploads if (lambda s: s[0] != 200 or s[1].get("hash") != u["etag"])(lib.stat(up.url, u["key"]))]
        during = [i for i, (_, _, _, t) in results.items() if outage_span[0] <= t <= outage_span[1]]
        checks += [
            (f"every upload stored: 200 or 579 ({len(other)} other failures: {list(other.items())[:3]})", not other),
            (f"clients got 579 during the outage ({len(got579)} of {len(during)} that finished inside it)",
             len(got579) > 0),
            ("every object stats with its hash", not bad_stat),
            (f"every upload has a biz-server record after {waited:.1f} s ({len(missing)} missing)", not missing),
            (f"no upload recorded twice ({len(twice)})", not twice),
            (f"every record carries the object's hash ({len(wrong)} wrong)", not wrong),
            ("up-server outbox: nothing pending or failed", pending is not None and not pending.get("items")
             and failed is not None and not failed.get("items")),
        ]
        extra = (f"{n} uploads, outage {outage_span[1] - outage_span[0]:.1f} s, {len(ok)} x 200, {len(got579)} x 579, "
                 f"{len(other)} other; all {n - len(missing)}/{n} records after {waited:.1f} s, {len(twice)} twice")
        up.stop()
        biz.stop()
    except Exception as e:
        import traceback
        traceback.print_exc()
        checks.append((f"harness error: {e!r}", False))
    return lib.finish(SUITE, checks, extra, started, args.seed, work, args.keep)


if __name__ == "__main__":
    sys.exit(main())
