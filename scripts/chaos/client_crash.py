"""client-crash: kill -9 up-cli at N random byte offsets of one upload, for v1 and for v2.

Each run of the same `up-cli put --json --checkpoint` command is SIGKILLed as soon as its
progress (`bytesSent`) passes the next offset (offsets sorted, so each run gets further); then the
same command runs until it finishes. Checks per protocol: every kill was a real SIGKILL, the last
run resumed and finished, its hash = `up-cli etag` = up-server's stat = the callback record's,
exactly one biz-server record for the key, the download equals the file, and the bytes stored
again (up-server's bytes-received counter - file size) stay within kills x concurrency x chunk.
"""
import argparse
import os
import random
import signal
import sys
import tempfile
import time

import chaoslib as lib

SUITE = "client-crash"


def one_protocol(proto, args, bins, up, biz, work, checks, totals, notes):
    size, kills = args.size, args.kills
    cli = os.path.join(bins, "up-cli")
    path = lib.make_file(os.path.join(work, f"{proto}.bin"), size, seed=hash(proto) & 0xFFFF ^ args.seed)
    key = f"demo/chaos/client-crash-{proto}-{args.seed}.bin"
    checkpoint = os.path.join(work, f"{proto}.ckpt.json")
    unit = args.chunk if proto == "v1" else args.part
    argv = [cli, "put", path, "--key", key, "--biz", biz.url, "--api-key", lib.API_KEY, "--checkpoint", checkpoint,
            "--protocol", proto, "--concurrency", str(args.concurrency), "--json", "--limit-rate", args.rate]
    argv += ["--chunk-size", str(unit)] if proto == "v1" else ["--part-size", str(unit)]
    rnd = random.Random(args.seed * 7 + (1 if proto == "v2" else 0))
    targets = sorted(rnd.randint(int(size * 0.01), int(size * 0.75)) for _ in range(kills))
    received_before = lib.metric(up.url, "upgate_up_bytes_received_total") or 0.0
    sent_total, killed, real_kills, ended_early, kill_points, found = 0, 0, 0, 0, [], []
    stalls, stall_messages = 0, []
    run_no = 0
    for i, target in enumerate(targets):
        stop_deadline = time.time() + 90
        while True:
            base = lib.checkpoint_acknowledged(checkpoint)
            # A target the previous run already overshot: kill as soon as this run sends anything new.
            goal = max(target, base + 1)
            run = lib.CliRun(argv, os.path.join(work, f"{proto}-run{run_no}.jsonl"))
            run_no += 1
            reached = run.wait_until(lambda r: r.last_sent is not None and r.last_sent >= goal, timeout=300)
            run.kill9()
            status = run.wait()
            start = run.event("start") or {}
            if i > 0:
                found.append(start.get("checkpointFound") is True)
            if status == -signal.SIGKILL:
                real_kills += 1
                kill_points.append(run.last_sent or 0)
                sent_total += max(0, (run.last_sent or base) - base)
                break
            done = run.event("done")
            if done:
                sent_total += done["bytesSent"]
                ended_early += 1
                lib.log(SUITE, f"{proto} run {run_no - 1}: finished before its kill at {goal} (exit {status})")
                break
            # Failed before its kill: a resume that could not go on (e.g. 599 "another chunk for
            # block ... is in progress": the killed run's request still holds the block). Retry
            # the same command (bounded), counting it.
            stalls += 1
            stall_messages.append(run.stderr_text().strip().splitlines()[0][:200] if run.stderr_text().strip() else f"exit {status}")
            lib.log(SUITE, f"{proto} run {run_no - 1}: exit {status} before its kill: {stall_messages[-1]}")
            if time.time() > stop_deadline:
                break
            time.sleep(2)
        if ended_early:
            break
        killed += 1
    # The same command until it finishes (bounded).
    final, attempts = None, 0
    if ended_early and run.event("done") and status == 0:
        final = (run, run.event("done"))  # a run finished before its kill: that was the last one
    final_deadline = time.time() + 90
    while final is None and time.time() < final_deadline:
        attempts += 1
        run = lib.CliRun(argv, os.path.join(work, f"{proto}-final{attempts}.jsonl"))
        status = run.wait(timeout=600)
        done = run.event("done")
        if status == 0 and done:
            final = (run, done)
            sent_total += done["bytesSent"]
        else:
            stalls += 1
            stall_messages.append(run.stderr_text().strip().splitlines()[0][:200] if run.stderr_text().strip() else f"exit {status}")
            lib.log(SUITE, f"{proto} final run {attempts}: exit {status}: {stall_messages[-1]}")
            time.sleep(2)
    received = (lib.metric(up.url, "upgate_up_bytes_received_total") or 0.0) - received_before
    # The hash the upload must end with: `up-cli etag` (v1, and v2 in 4 MiB parts), else the v2
    # hash of the part layout, computed here independently (qiniu-protocol.md §7.2).
    local = lib.etag_of(cli, path) if proto == "v1" or unit == 4 << 20 else lib.v2_hash(path, unit)
    records = [r for r in (lib.biz_records(biz.url) or []) if r.get("key") == key]
    st_status, st = lib.stat(up.url, key)
    dl_status, body = lib.download(up.url, key)
    with open(path, "rb") as f:
        same = dl_status == 200 and body == f.read()
    resent_client = sent_total - size
    resent_server = int(received - size)
    # A kill can lose up to `concurrency` unacknowledged chunks / parts. v1 also redoes a whole
    # block when the killed run's last chunk of it was stored but its reply never came (701 on
    # the stale ctx), so its hard bound is concurrency x 4 MiB per kill; above the chunk bound is
    # reported, not failed.
    soft_bound = real_kills * args.concurrency * unit
    bound = real_kills * args.concurrency * (4 << 20 if proto == "v1" else unit)
    done = final[1] if final else {}
    checks += [
        # A run can finish before its kill when its offset is near the end (progress comes 5 times a
        # second): then there is nothing left to kill. At most one such run.
        (f"{proto}: {kills} runs SIGKILLed mid-upload ({real_kills} killed, {ended_early} finished first)",
         real_kills + ended_early == kills and real_kills >= kills - 1),
        (f"{proto}: every run after a kill found the checkpoint", all(found)),
        (f"{proto}: the same command finished (resumed) after the kills", bool(final) and done.get("resumed") is True),
        (f"{proto}: up-cli hash == {'up-cli etag' if proto == 'v1' or unit == 4 << 20 else 'the v2 hash of its parts'}",
         done.get("hash") == local),
        (f"{proto}: up-server stat hash/fsize == the file's", st_status == 200 and st.get("hash") == local
         and st.get("fsize") == size),
        (f"{proto}: exactly one callback record, with the file's hash", len(records) == 1
         and records[0].get("hash") == local and records[0].get("fsize") == size),
        (f"{proto}: the download equals the file", same),
        (f"{proto}: the checkpoint is gone after success", not os.path.exists(checkpoint)),
        (f"{proto}: bytes stored again {resent_server} <= kills x concurrency x {'block' if proto == 'v1' else 'part'}"
         f" = {bound}", 0 <= resent_server <= bound),
    ]
    if stalls:
        notes.append(f"{proto}: {stalls} resumed runs failed before finishing/being killed: {sorted(set(stall_messages))[:3]}")
    totals.append(f"{proto}: {real_kills} kills, {stalls} failed resumes, resumed={done.get('resumed')}, etag "
                  f"{'ok' if done.get('hash') == local else 'DIFF'}, records {len(records)}, "
                  f"re-sent {resent_client / 2**20:.1f} MiB by the client / {resent_server / 2**20:.1f} MiB stored "
                  f"again (kills x concurrency x {'chunk' if proto == 'v1' else 'part'} = {soft_bound / 2**20:.0f} MiB)")
    lib.log(SUITE, totals[-1] + f"; kill points (MiB): {[round(k / 2**20, 1) for k in kill_points]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--short", action="store_true", help="5 kills on 16 MiB (default: 50 on 256 MiB)")
    ap.add_argument("--bin", help="directory of up-server, biz-server, up-cli (default: release build)")
    ap.add_argument("--kills", type=int)
    ap.add_argument("--size", type=int)
    ap.add_argument("--protocols", default="v1,v2")
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
    args.kills = args.kills or (5 if args.short else 50)
    args.size = args.size or ((16 if args.short else 256) << 20)
    # v2 in 1 MiB parts (kill points every MiB); its hash is then the §7.2 v2 hash, not the plain
    # etag: checked against lib.v2_hash, and the download against the file's bytes.
    args.concurrency, args.chunk, args.part = 2, 1 << 20, 1 << 20
    # Slow enough that a kill lands near its offset: JSON progress comes at most 5 times a second,
    # so a kill lands within rate/5 bytes of its target (1.6 MB short, 2.4 MB full; the mean gap
    # between offsets is 3.2 MiB short and 5.1 MiB full).
    args.rate = "8M" if args.short else "12M"
    lib.install_cleanup()
    bins = lib.bin_dir(args.bin)
    work = tempfile.mkdtemp(prefix="upgate-chaos-client-")
    started = time.time()
    checks, totals, notes = [], [], []
    lib.log(SUITE, f"seed {args.seed}, {args.kills} kills x {args.size >> 20} MiB, work {work}")
    try:
        up = lib.Server("up-server", os.path.join(bins, "up-server"), lib.up_config(work), lib.free_port(),
                        os.path.join(work, "up"), os.path.join(work, "up-server.log")).start()
        biz = lib.Server("biz-server", os.path.join(bins, "biz-server"), lib.biz_config(work), lib.free_port(),
                         os.path.join(work, "biz"), os.path.join(work, "biz-server.log"),
                         env={"UPGATE_UP_HOSTS": up.url}).start()
        for proto in args.protocols.split(","):
            one_protocol(proto, args, bins, up, biz, work, checks, totals, notes)
        up.stop()
        biz.stop()
    except Exception as e:  # a crash of the harness is a failure, never a pass
        checks.append((f"harness error: {e!r}", False))
    for note in notes:
        print(f"  note: {note}", flush=True)
    return lib.finish(SUITE, checks, " | ".join(totals), started, args.seed, work, args.keep)


if __name__ == "__main__":
    sys.exit(main())
