"""biz-outage: biz-server is down (kill -9, then restarted on the same port and data dir) while
uploads finish; the up-server outbox must deliver every callback once biz-server is back.

N small uploads (`up-cli put --token`, form) with tokens made by the official Qiniu SDK
(qiniu.Auth.upload_token) whose callbackUrl is the callback proxy in front of biz-server's
/v1/callback and whose callbackBody is the one biz-server signs into its own tokens. They are
launched evenly over 2 x the outage, the outage covering the middle half. up-server runs from a
temp config with short callback retry delays (base 1 s, max 2 s, 2 s timeout). During the outage
the synchronous callback fails and the client gets 579 (the object is stored): exactly the
uploads whose first delivery (the proxy's log) got no answer from biz-server must get 579, and
the outage must have caused some. After biz-server returns, a bounded wait for the outbox; then
every upload has exactly one record with its hash (the official SDK's `qiniu.etag`), every
callback was delivered until answered and never again, nothing is pending or failed in the
outbox, and every object stats with the right hash.
"""
import os
import random
import sys
import threading
import time

import chaoslib as lib
import harness as h

SUITE = "biz-outage"
CALLBACK_BODY = ("bucket=$(bucket)&key=$(key)&hash=$(etag)&fsize=$(fsize)&mimeType=$(mimeType)&fname=$(fname)"
                 "&endUser=$(endUser)&clientId=demo&traceId=chaos-{i}")


def prepare_uploads(suite, chain):
    """The files, keys, SDK-made tokens and expected etags."""
    args, rnd = suite.args, random.Random(suite.args.seed)
    uploads = []
    for i in range(args.uploads):
        path = h.make_file(os.path.join(suite.work, f"s{i}.bin"), rnd.randint(1, 256 << 10), seed=args.seed * 1000 + i)
        key = f"demo/chaos/biz-outage-{args.seed}-{i}.bin"
        token = h.upload_token(key, {"callbackUrl": chain.proxy.url + "/v1/callback",
                                     "callbackBody": CALLBACK_BODY.format(i=i),
                                     "callbackBodyType": h.FORM})
        uploads.append({"i": i, "path": path, "key": key, "token": token, "etag": h.etag(path)})
    return uploads


class Outage:
    """biz-server killed at `start` seconds after t0, back at `end`."""

    def __init__(self, suite, chain, start, end):
        self.suite, self.chain, self.start, self.end = suite, chain, start, end
        self.span = None

    def step(self, t0):
        now = time.time() - t0
        if self.span is None and now >= self.start:
            self.chain.biz.kill9()
            self.span = [now, None]
            self.suite.log(f"biz-server killed at t={now:.1f} s")
        if self.span and self.span[1] is None and now >= self.end:
            self.chain.biz.start()
            self.span[1] = time.time() - t0
            self.suite.log(f"biz-server back at t={self.span[1]:.1f} s")

    def over(self):
        return self.span is not None and self.span[1] is not None


def upload_through_outage(suite, chain, bins, uploads):
    """Launches the uploads evenly over 2 x the outage, biz-server down in the middle half;
    returns ({i: (exit status, done event, error message, seconds after t0)}, the outage span)."""
    n, outage = len(uploads), suite.args.outage
    window = 2 * outage
    cut = Outage(suite, chain, window / 4, window / 4 + outage)
    t0, results = time.time(), {}

    def upload(u):
        argv = [os.path.join(bins, "up-cli"), "put", u["path"], "--key", u["key"], "--token", u["token"],
                "--up-host", chain.up.url, "--no-checkpoint", "--json"]
        run = lib.CliRun(argv, os.path.join(suite.work, f"s{u['i']}.jsonl"))
        status = run.wait(timeout=120)
        results[u["i"]] = (status, run.event("done"), (run.event("error") or {}).get("message", ""), time.time() - t0)

    threads = []
    for u in uploads:
        while time.time() < t0 + u["i"] * window / n:
            cut.step(t0)
            time.sleep(0.02)
        threads.append(threading.Thread(target=upload, args=(u,)))
        threads[-1].start()
    while not cut.over():
        cut.step(t0)
        time.sleep(0.02)
    for thread in threads:
        thread.join(timeout=180)
    return results, cut.span, t0


def check_clients(suite, chain, uploads, results, span):
    """200 or 579 for every upload, 579 exactly where the first delivery went unanswered."""
    ok = [i for i, (s, d, _, _) in results.items() if s == 0 and d]
    got579 = {i for i, (s, _, m, _) in results.items() if s != 0 and "579" in m}
    other = {i: (s, m[:160]) for i, (s, _, m, _) in results.items() if s != 0 and "579" not in m}
    suite.log(f"clients: {len(ok)} ok, {len(got579)} got 579, {len(other)} other failures {other}")
    first = {}
    for d in chain.proxy.deliveries_snapshot():
        first.setdefault(d.key, d)
    # The first delivery of a key is up-server's synchronous attempt: unanswered, the client's 579.
    caused = {u["i"] for u in uploads if not (first.get(u["key"]) and first[u["key"]].ok
                                               and 200 <= (first[u["key"]].status or 0) < 300)}
    during = [i for i, (_, _, _, t) in results.items() if span[0] <= t <= span[1]]
    suite.check(f"every upload stored: 200 or 579 ({len(other)} other failures: {list(other.items())[:3]})", not other)
    suite.check(f"the outage caused 579s: {len(caused)} first deliveries unanswered ({len(during)} uploads "
                f"finished inside the outage)", len(caused) > 0)
    suite.check(f"579 exactly for the uploads whose synchronous callback went unanswered ({len(got579)} got 579, "
                f"{len(caused)} caused; differ: {sorted(got579 ^ caused)[:5]})", got579 == caused)
    return len(ok), len(got579), len(other)


def check_delivery(suite, chain, uploads, back):
    """Records, deliveries, outbox and stat, after a bounded wait for the outbox."""
    keys = {u["key"]: u["etag"] for u in uploads}
    records, _ = lib.wait_for_outbox(chain, keys)
    waited = time.time() - back  # since biz-server came back
    have = {r["key"] for r in records}
    missing = [k for k in keys if k not in have]
    suite.check("every object stats with its hash",
                all((lambda s: s[0] == 200 and s[1].get("hash") == u["etag"])(h.stat(chain.up.url, u["key"]))
                    for u in uploads))
    suite.check(f"every upload has a biz-server record after {waited:.1f} s ({len(missing)} missing)", not missing)
    lib.check_records(suite, records, keys)
    deliveries = lib.check_delivered_once(suite, chain, list(keys), biz_restarted=True)
    suite.check("up-server outbox: nothing pending or failed", h.outbox_idle(chain.up.url))
    return missing, waited, deliveries


def parse_args():
    ap = h.suite_arguments(__doc__, "20 uploads, 8 s outage (default: 100, 30 s)")
    ap.add_argument("--uploads", type=int)
    ap.add_argument("--outage", type=float)
    return h.short_or_full(ap.parse_args(), uploads=(20, 100), outage=(8.0, 30.0))


def main():
    args = parse_args()
    suite = h.Suite(SUITE, args, "upgate-chaos-biz-")
    bins = suite.bins
    suite.log(f"seed {args.seed}, {args.uploads} uploads, {args.outage:.0f} s outage, work {suite.work}")
    extra = ""
    with suite:
        chain = lib.Chain(suite, bins, up_config=h.up_config(suite.work, retry_base=1, retry_max=2))
        uploads = prepare_uploads(suite, chain)
        results, span, t0 = upload_through_outage(suite, chain, bins, uploads)
        ok, got579, other = check_clients(suite, chain, uploads, results, span)
        missing, waited, deliveries = check_delivery(suite, chain, uploads, t0 + span[1])
        n = args.uploads
        extra = (f"{n} uploads, outage {span[1] - span[0]:.1f} s, {ok} x 200, {got579} x 579, {other} other; "
                 f"all {n - len(missing)}/{n} records after {waited:.1f} s, {deliveries} deliveries")
        chain.stop()
    return suite.finish(extra)


if __name__ == "__main__":
    sys.exit(main())
