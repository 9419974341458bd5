"""client-crash: kill -9 up-cli at N random byte offsets of one upload, for v1 and for v2.

Each run of the same `up-cli put --json --checkpoint` command is SIGKILLed as soon as its
progress (`bytesSent`) passes the next offset (offsets sorted, so each run gets further); then the
same command runs until it finishes. Checks per protocol: every kill was a real SIGKILL, the last
run resumed and finished, its hash = the official SDK's `qiniu.etag` of the file (v1; v2 in 1 MiB
parts: the §7.2 hash of its parts, computed here) = up-server's stat = the callback record's,
exactly one biz-server record for the key, the callback delivered once (the callback proxy's log
and biz-server's counters), the download equals the file, and the bytes stored again
(up-server's bytes-received counter - file size) stay within kills x concurrency x block.
"""
import os
import random
import signal
import sys
import time

import chaoslib as lib
import harness as h

SUITE = "client-crash"
BLOCK = 4 << 20


class Protocol:
    """One protocol's upload: its file, command, kill offsets and what the runs did."""

    def __init__(self, suite, chain, bins, proto):
        args = suite.args
        self.proto, self.size, self.work = proto, args.size, suite.work
        self.unit = args.chunk if proto == "v1" else args.part
        self.path = h.make_file(os.path.join(suite.work, f"{proto}.bin"), self.size, seed=hash(proto) & 0xFFFF ^ args.seed)
        self.key = f"demo/chaos/client-crash-{proto}-{args.seed}.bin"
        self.checkpoint = os.path.join(suite.work, f"{proto}.ckpt.json")
        self.argv = lib.put_argv(bins, self.path, self.key, chain.biz, self.checkpoint, proto,
                                 "--concurrency", str(args.concurrency), "--limit-rate", args.rate,
                                 "--chunk-size" if proto == "v1" else "--part-size", str(self.unit))
        rnd = random.Random(args.seed * 7 + (1 if proto == "v2" else 0))
        self.targets = sorted(rnd.randint(int(self.size * 0.01), int(self.size * 0.75)) for _ in range(args.kills))
        # The expected hash, never from up-cli: qiniu.etag for v1, the §7.2 part hash for v2.
        self.expected = h.etag(self.path) if proto == "v1" else h.v2_hash(self.path, self.unit)
        self.sent, self.real_kills, self.ended_early, self.kill_points, self.found = 0, 0, 0, [], []
        self.stalls, self.stall_messages, self.runs, self.final = 0, [], 0, None

    def new_run(self, name):
        run = lib.CliRun(self.argv, os.path.join(self.work, f"{self.proto}-{name}.jsonl"))
        self.runs += 1
        return run


def kill_runs(suite, p):
    """One run per offset, SIGKILLed once its progress passes it; a run that fails before its kill
    (a resume the killed run's request still blocks) is retried, bounded and counted."""
    for i, target in enumerate(p.targets):
        deadline = time.time() + 90
        while True:
            base = lib.checkpoint_acknowledged(p.checkpoint)
            goal = max(target, base + 1)  # a target the last run overshot: kill at the next new byte
            run = p.new_run(f"run{p.runs}")
            run.wait_until(lambda r: r.last_sent is not None and r.last_sent >= goal, timeout=300)
            run.kill9()
            status = run.wait()
            if i > 0:
                p.found.append((run.event("start") or {}).get("checkpointFound") is True)
            if status == -signal.SIGKILL:
                p.real_kills += 1
                p.kill_points.append(run.last_sent or 0)
                p.sent += max(0, (run.last_sent or base) - base)
                break
            done = run.event("done")
            if done:
                p.sent += done["bytesSent"]
                p.ended_early += 1
                if status == 0:
                    p.final = done
                suite.log(f"{p.proto} run {p.runs - 1}: finished before its kill at {goal} (exit {status})")
                return
            p.stalls += 1
            p.stall_messages.append(run.first_error_line(status))
            suite.log(f"{p.proto} run {p.runs - 1}: exit {status} before its kill: {p.stall_messages[-1]}")
            if time.time() > deadline:
                break
            time.sleep(2)


def finish_upload(suite, p):
    """The same command until it finishes (bounded)."""
    deadline, attempt = time.time() + 90, 0
    while p.final is None and time.time() < deadline:
        attempt += 1
        run = p.new_run(f"final{attempt}")
        status = run.wait(timeout=600)
        done = run.event("done")
        if status == 0 and done:
            p.final = done
            p.sent += done["bytesSent"]
        else:
            p.stalls += 1
            p.stall_messages.append(run.first_error_line(status))
            suite.log(f"{p.proto} final run {attempt}: exit {status}: {p.stall_messages[-1]}")
            time.sleep(2)


def check_upload(suite, chain, p, received):
    """The result against the file: hash, stat, record, download, checkpoint, bytes stored again."""
    kills = suite.args.kills
    records = [r for r in (h.biz_records(chain.biz.url) or []) if r.get("key") == p.key]
    st_status, st = h.stat(chain.up.url, p.key)
    dl_status, body = h.download(chain.up.url, p.key)
    with open(p.path, "rb") as f:
        same = dl_status == 200 and body == f.read()
    resent_server = int(received - p.size)
    # A kill can lose up to `concurrency` unacknowledged chunks / parts. v1 also redoes a whole
    # block when the killed run's last chunk of it was stored but its reply never came (701 on the
    # stale ctx), so its bound is concurrency x 4 MiB per kill.
    bound = p.real_kills * suite.args.concurrency * (BLOCK if p.proto == "v1" else p.unit)
    done = p.final or {}
    what = "qiniu.etag" if p.proto == "v1" else "the v2 hash of its parts"
    # A run can finish before its kill when its offset is near the end (progress comes 5 times a
    # second): then there is nothing left to kill. At most one such run.
    suite.check(f"{p.proto}: {kills} runs SIGKILLed mid-upload ({p.real_kills} killed, {p.ended_early} finished first)",
                p.real_kills + p.ended_early == kills and p.real_kills >= kills - 1)
    suite.check(f"{p.proto}: every run after a kill found the checkpoint", all(p.found))
    suite.check(f"{p.proto}: the same command finished (resumed) after the kills",
                bool(p.final) and done.get("resumed") is True)
    suite.check(f"{p.proto}: up-cli hash == {what} of the file", done.get("hash") == p.expected)
    suite.check(f"{p.proto}: up-server stat hash/fsize == the file's", st_status == 200
                and st.get("hash") == p.expected and st.get("fsize") == p.size)
    suite.check(f"{p.proto}: exactly one callback record, with the file's hash", len(records) == 1
                and records[0].get("hash") == p.expected and records[0].get("fsize") == p.size)
    suite.check(f"{p.proto}: the download equals the file", same)
    suite.check(f"{p.proto}: the checkpoint is gone after success", not os.path.exists(p.checkpoint))
    suite.check(f"{p.proto}: bytes stored again {resent_server} <= kills x concurrency x "
                f"{'block' if p.proto == 'v1' else 'part'} = {bound}", 0 <= resent_server <= bound)
    if p.stalls:
        suite.note(f"{p.proto}: {p.stalls} resumed runs failed before finishing/being killed: "
                   f"{sorted(set(p.stall_messages))[:3]}")
    soft_bound = p.real_kills * suite.args.concurrency * p.unit
    total = (f"{p.proto}: {p.real_kills} kills, {p.stalls} failed resumes, resumed={done.get('resumed')}, etag "
             f"{'ok' if done.get('hash') == p.expected else 'DIFF'}, records {len(records)}, re-sent "
             f"{(p.sent - p.size) / 2**20:.1f} MiB by the client / {resent_server / 2**20:.1f} MiB stored again "
             f"(kills x concurrency x {'chunk' if p.proto == 'v1' else 'part'} = {soft_bound / 2**20:.0f} MiB)")
    suite.log(total + f"; kill points (MiB): {[round(k / 2**20, 1) for k in p.kill_points]}")
    return total


def one_protocol(suite, chain, bins, proto):
    p = Protocol(suite, chain, bins, proto)
    received_before = h.metric(chain.up.url, "upgate_up_bytes_received_total") or 0.0
    kill_runs(suite, p)
    finish_upload(suite, p)
    received = (h.metric(chain.up.url, "upgate_up_bytes_received_total") or 0.0) - received_before
    return p, check_upload(suite, chain, p, received)


def parse_args():
    ap = h.suite_arguments(__doc__, "5 kills on 16 MiB (default: 50 on 256 MiB)")
    ap.add_argument("--kills", type=int)
    ap.add_argument("--size", type=int)
    ap.add_argument("--protocols", default="v1,v2")
    args = h.short_or_full(ap.parse_args(), kills=(5, 50), size=(16 << 20, 256 << 20))
    # v2 in 1 MiB parts (kill points every MiB); its hash is then the §7.2 v2 hash, not the plain etag.
    args.concurrency, args.chunk, args.part = 2, 1 << 20, 1 << 20
    # Slow enough that a kill lands near its offset: JSON progress comes at most 5 times a second,
    # so a kill lands within rate/5 bytes of its target (1.6 MB short, 2.4 MB full; the mean gap
    # between offsets is 3.2 MiB short and 5.1 MiB full).
    args.rate = "8M" if args.short else "12M"
    return args


def main():
    args = parse_args()
    suite = h.Suite(SUITE, args, "upgate-chaos-client-")
    bins = suite.bins
    suite.log(f"seed {args.seed}, {args.kills} kills x {args.size >> 20} MiB, work {suite.work}")
    totals = []
    with suite:
        chain = lib.Chain(suite, bins)
        uploads = [one_protocol(suite, chain, bins, proto) for proto in args.protocols.split(",")]
        totals = [total for _, total in uploads]
        lib.wait_for_outbox(chain, [p.key for p, _ in uploads])
        lib.check_delivered_once(suite, chain, [p.key for p, _ in uploads])
        chain.stop()
    return suite.finish(" | ".join(totals))


if __name__ == "__main__":
    sys.exit(main())
