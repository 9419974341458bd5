#!/usr/bin/env python3
"""scripts/demo's checks after the resumed upload: what it shows and what must hold.

    demo_check.py --up URL --biz URL --file F --key K --sdk-etag E --cli-etag E --run RUN2.jsonl --download OUT
                  [--biz-metrics URL ...]   (biz-server instances whose counters are summed; default --biz)

The expected hash is the official SDK's `qiniu.etag` of the file (computed by scripts/demo), never
the product's own: up-cli's result, `up-cli etag`, up-server's stat and the callback record must all
equal it. Exit status 1 if any check fails.
"""
import argparse
import json
import os
import sys

import harness as h


def main():
    ap = argparse.ArgumentParser()
    for name in ("up", "biz", "file", "key", "sdk-etag", "cli-etag", "run", "download"):
        ap.add_argument("--" + name, required=True)
    ap.add_argument("--biz-metrics", action="append", help="a biz-server instance (behind a proxy: each of them)")
    a = ap.parse_args()
    size = os.path.getsize(a.file)
    failures = []

    def check(what, ok):
        print(("  ok    " if ok else "  DIFF  ") + what)
        if not ok:
            failures.append(what)

    events = [json.loads(line) for line in open(a.run) if line.strip()]
    start = next(e for e in events if e["event"] == "start")
    done = next(e for e in events if e["event"] == "done")
    records = h.biz_records(a.biz) or []
    record = records[0] if records else {}
    st_status, stat = h.stat(a.up, a.key)
    dl_status, body = h.download(a.up, a.key)
    with open(a.download, "wb") as out:
        out.write(body)
    accepted = sum(h.metric(b, "upgate_biz_callbacks_accepted_total") for b in a.biz_metrics or [a.biz])
    duplicate = sum(h.metric(b, "upgate_biz_callbacks_duplicate_total") for b in a.biz_metrics or [a.biz])

    print("resumed upload (second run):")
    print(f"  checkpoint found: {start['checkpointFound']}, resumed: {done['resumed']}")
    print(f"  sent now: {done['bytesSent']} bytes; already on the server, skipped: {done['bytesSkipped']} bytes; "
          f"{done['seconds']:.2f} s")
    print("callback record biz-server stored (GET /v1/uploads):")
    print("  " + json.dumps(record, ensure_ascii=False))
    print("reply up-cli got (the record, relayed by up-server):")
    print("  " + json.dumps(done["reply"], ensure_ascii=False))
    print("up-server stat:")
    print("  " + json.dumps(stat))
    print("hashes:")
    print(f"  official SDK (qiniu.etag)  {a.sdk_etag}")
    print(f"  up-cli etag                {a.cli_etag}")
    print(f"  up-cli result              {done['hash']}")
    print(f"  up-server stored (stat)    {(stat or {}).get('hash')}")
    print(f"  callback record            {record.get('hash')}")
    print(f"callbacks biz-server was delivered: {accepted:.0f} accepted, {duplicate:.0f} duplicate")
    print("checks:")
    check("the second run resumed from the checkpoint", start["checkpointFound"] and done["resumed"] is True)
    check("the second run sent less than the whole file", 0 < done["bytesSent"] < size and done["bytesSkipped"] > 0)
    check("exactly one record in biz-server, delivered once (1 accepted, 0 duplicate callbacks)",
          len(records) == 1 and accepted == 1 and duplicate == 0)
    check("record key / size are the file's", record.get("key") == a.key and record.get("fsize") == size)
    check("the reply up-cli got is the stored record", done["reply"] == record)
    check("up-cli etag == the official SDK's etag", a.cli_etag == a.sdk_etag)
    check("up-cli's result hash == the official SDK's etag", done["hash"] == a.sdk_etag)
    check("the hash up-server stored == the official SDK's etag", st_status == 200
          and stat.get("hash") == a.sdk_etag and stat.get("fsize") == size)
    check("the hash the callback carried == the official SDK's etag", record.get("hash") == a.sdk_etag)
    with open(a.file, "rb") as f:
        original = f.read()
    same = dl_status == 200 and body == original
    check(f"the {size} bytes downloaded back equal the file", same)
    if not same:  # what came back instead, so a failed run says how it differed
        first = next((i for i, (x, y) in enumerate(zip(body, original)) if x != y), min(len(body), size))
        print(f"        download: status {dl_status}, {len(body)} bytes, first difference at byte {first}")
    if failures:
        print(f"demo: {len(failures)} check(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
