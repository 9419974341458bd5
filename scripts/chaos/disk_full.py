"""disk-full: up-server's data dir (its blobs AND its SQLite index, `<dataDir>/blobs` and
`<dataDir>/index.sqlite3`) sits on a small tmpfs that fills up while uploads run.

The mount: a plain `mount -t tmpfs -o size=<M>m` first; where that is refused, the suite's
up-server runs inside a private mount namespace (`unshare -m`, or `unshare -rm` without root)
that mounts the tmpfs before exec'ing up-server, and the suite reaches the mount through
/proc/<pid>/root. Neither possible: a SKIP line, exit 77 with --allow-skip (and the skip is
recorded for scripts/test's last line), else exit 1. The mount is always unmounted on exit.
biz-server keeps its data on the normal disk.

Each round (1 with --short holding the disk full 2 s; 6 by default, holding it 20 s and 3 s in
turn, so the clients give up in some rounds and ride it out on their retries in others):
  fill      a filler file leaves a third of the round's bytes free, then v1 and v2 uploads
            (up-cli with --biz, so callbacks go through biz-server, each with a checkpoint)
            start, then form uploads; together three times more bytes than are free;
  full      at up-server's first 503 a hog takes every free page and keeps taking what failed
            uploads give back (the disk stays at 0 bytes); one running v1 and one v2 upload are
            paused with SIGINT (checkpoint kept); probes, straight HTTP: form uploads, mkblk,
            v2 inits until the SQLite index itself is refused, a part per issued id; every
            acknowledged object is stat'ed and downloaded; then the hold;
  free      filler and hog file deleted; the first runs still going finish on their retries,
            every other upload runs the same command again (its checkpoint) until it finishes.
After the rounds: a new form, v1 and v2 upload.
Checks: up-server keeps the same pid and answers /healthz throughout; every failing answer is
`503 {"error":"insufficient storage"}` with Retry-After (no 500/599 anywhere in the access log);
every object acknowledged (200) before or during the full disk stats with its hash (the official
SDK's `qiniu.etag`, or the §7.2 hash of the v2 parts computed here) and downloads byte for byte
(during the full disk too, except a large multi-segment download, which needs scratch space on
the data disk: 503 is allowed for it); every v2 upload id issued while full still lists its
parts; every resumed run resends at most the bytes its checkpoint did not hold, and ends with the
file's hash; exactly one biz-server record per finished upload, every callback delivered until
answered and never again (the callback proxy's log, biz-server's counters), nothing pending or
failed in the outbox; after up-server stops, the index passes PRAGMA integrity_check and
foreign_key_check, every object's segments exist on disk at their length, every block's blob is
exactly as long as its acknowledged offset, every part's blob as long as the part, and no blob
file is left that nothing references.
"""
import atexit
import os
import random
import shutil
import signal
import sys
import time

import chaoslib as lib
import disk_probes as probes
import harness as h
from tmpfs import MiB, Hog, Tmpfs, write_filler

SUITE = "disk-full"
RESERVE = 10 * MiB  # kept free of the rounds' uploads: probes, the new uploads at the end, the index


class Job:
    """One upload by up-cli: its file, key, command and runs."""

    def __init__(self, name, proto, size, work, seed, bins, biz, unit, rate=None):
        self.name, self.proto, self.size = name, proto, size
        self.path = h.make_file(os.path.join(work, f"{name}.bin"), size, seed=seed)
        self.sha1 = h.sha1_file(self.path)
        self.hash = h.v2_hash(self.path, unit) if proto == "v2" else h.etag(self.path)
        self.key = f"demo/chaos/disk-full-{seed}-{name}.bin"
        self.checkpoint = os.path.join(work, f"{name}.ckpt.json")
        # A rate-limited upload, one chunk at a time, is sure to be half-way (acknowledged chunks
        # in its checkpoint) when the disk fills: the one to pause and resume.
        extra = ["--concurrency", "1", "--limit-rate", str(rate)] if rate else ["--concurrency", "2"]
        extra += {"v1": ["--chunk-size", str(unit)], "v2": ["--part-size", str(unit)]}.get(proto, [])
        self.argv = lib.put_argv(bins, self.path, self.key, biz, self.checkpoint, proto, *extra)
        self.pausable = bool(rate)
        self.work, self.runs, self.done, self.paused, self.notes = work, [], None, False, []

    def start(self):
        run = lib.CliRun(self.argv, os.path.join(self.work, f"{self.name}-run{len(self.runs)}.jsonl"))
        self.runs.append(run)
        return run

    def finish_run(self, run, timeout):
        status = run.wait(timeout=timeout)
        done = run.event("done") if status == 0 else None
        if done:
            self.done = done
        else:
            error = run.event("error") or {}
            self.notes.append(f"exit {status}: {error.get('message') or run.stderr_text().strip()[-160:]}")
        return status


class DiskFull:
    """The suite's state across its steps."""

    def __init__(self, suite, bins, tmpfs):
        self.suite, self.bins, self.tmpfs, self.args = suite, bins, tmpfs, suite.args
        self.rnd = random.Random(self.args.seed)
        self.verdicts = probes.Verdicts()
        self.acknowledged = {}  # key -> (size, sha1, hash) of every object a 200 acknowledged
        self.v2_ids_while_full, self.jobs_all, self.resumed_runs = [], [], []
        self.stats = {"full_503": 0, "full_200": 0, "downloads_503": 0}
        self.round_notes, self.healthz = [], []
        self.chain = lib.Chain(suite, bins, up_binary=tmpfs.wrap(os.path.join(bins, "up-server"), suite.work),
                               up_data_dir=os.path.join(tmpfs.path, "up"))
        self.up = self.chain.up
        self.pid = tmpfs.pid = self.up.process.pid
        self.view = tmpfs.view()

    def alive(self, moment):
        status, _ = h.get(self.up.url + "/healthz", timeout=10)
        self.healthz.append((moment, self.up.alive() and self.up.process.pid == self.pid and status == 200))

    def job(self, name, proto, size, seed, unit, rate=None):
        job = Job(name, proto, size, self.suite.work, seed, self.bins, self.chain.biz, unit, rate)
        self.jobs_all.append(job)
        return job

    def acknowledge(self, job):
        if job.done:
            self.acknowledged[job.key] = (job.size, job.sha1, job.hash)

    def before(self):
        """One object per protocol, acknowledged on a disk with room. The 9 MiB v1 object has
        three segments: its download is joined in a scratch file on the data disk, so while the
        disk is full it may answer 503 (documented), never another 5xx."""
        seed = self.args.seed * 100
        jobs = [self.job(f"before-{i}-{p}", p, s, seed + i, MiB) for i, (p, s) in enumerate(
            (("form", 512 << 10), ("v1", 2 * MiB + 5), ("v2", 2 * MiB + 7), ("v1", 9 * MiB + 11)))]
        for job in jobs:
            job.finish_run(job.start(), timeout=120)
            self.acknowledge(job)
        self.suite.check("uploads before the disk fills succeed", all(j.done for j in jobs))

    def fill(self, rno, tag):
        """The filler, then the round's uploads until up-server answers its first 503; returns the
        jobs, their first runs and the filler's path."""
        # This round's uploads must fit once space is back (they all finish), with room kept for the
        # later rounds, the probes and the new uploads at the end; the filler leaves a third of them
        # free, so the disk runs out while they are under way.
        free = self.tmpfs.free()
        budget = int((free - RESERVE) / (self.args.rounds - rno) * 0.8)
        if budget < 8 * MiB:
            raise RuntimeError(f"{tag}: only {free / MiB:.1f} MiB free; use a bigger --mount-mb")
        filler = os.path.join(self.view, f"filler-{rno}")
        write_filler(filler, max(0, free - budget // 3))
        self.suite.log(f"{tag}: {free / MiB:.1f} MiB free, uploading {budget / MiB:.1f} MiB, filler leaves "
                       f"{self.tmpfs.free() / MiB:.1f} MiB")
        big = int(budget * 0.6 / 4)
        plan = [("v1", big), ("v2", big), ("v1", big + 123457), ("v2", big - 98765)]
        forms = 4 if self.args.short else 6
        plan += [("form", min(3 * MiB, int(budget * 0.35 / forms * self.rnd.uniform(0.7, 1.0)))) for _ in range(forms)]
        jobs = [self.job(f"r{rno}-{i}-{proto}", proto, size, self.args.seed * 1000 + rno * 100 + i,
                         MiB if proto == "v1" else 2 * MiB, max(256 << 10, size // 6) if i < 2 else None)
                for i, (proto, size) in enumerate(plan)]  # the first v1 and v2 rate-limited: ~6 s each
        log_mark = os.path.getsize(self.up.log_path)
        # The resumable ones first, until each holds an acknowledged chunk (so a pause leaves a
        # checkpoint worth resuming) or the space is nearly gone; then the form uploads.
        first = [(job, job.start()) for job in jobs if job.proto != "form"]
        deadline = time.time() + 15
        while time.time() < deadline and self.tmpfs.free() > 2 * MiB and \
                not all(lib.checkpoint_acknowledged(job.checkpoint) > 0 for job, _ in first if job.pausable):
            time.sleep(0.02)
        first += [(job, job.start()) for job in jobs if job.proto == "form"]
        # Until the space runs out (the first 503, or the disk nearly full) or everything ended.
        deadline = time.time() + 40
        while time.time() < deadline and self.tmpfs.free() > 256 << 10 \
                and not probes.saw_503(self.up.log_path, log_mark) and any(r.process.poll() is None for _, r in first):
            time.sleep(0.05)
        return jobs, first, filler

    def hold_full(self, rno, tag, first):
        """The hog keeps the disk at 0 bytes; one v1 and one v2 run paused; probes; the hold."""
        self.suite.log(f"{tag}: {self.tmpfs.free() >> 10} KiB free; topping up")
        hog = Hog(os.path.join(self.view, f"filler-top-{rno}"))
        hog.start()
        time.sleep(0.2)
        self.suite.log(f"{tag}: disk full ({hog.taken >> 10} KiB more filler, {self.tmpfs.free()} bytes free)")
        self.alive(f"{tag} full")
        for proto in ("v1", "v2"):  # Ctrl-C keeps the checkpoint; the rest carry on
            running = [(job, run) for job, run in first if job.proto == proto and run.process.poll() is None]
            # The rate-limited one, else one whose checkpoint holds the most acknowledged bytes.
            running.sort(key=lambda jr: (not jr[0].pausable, -lib.checkpoint_acknowledged(jr[0].checkpoint)))
            for job, run in running[:1]:
                run.process.send_signal(signal.SIGINT)
                job.paused = True
        probes.full_probes(self.up, self.verdicts, self.acknowledged, self.v2_ids_while_full, self.stats, rno,
                           self.rnd, self.args.short)
        self.alive(f"{tag} after probes")
        probes.check_objects(self.suite, self.up, self.acknowledged, f"{tag}, disk full", self.stats, full=True)
        # Held full a while: the clients keep retrying (503, Retry-After), some give up; up-server
        # must keep answering.
        hold = self.args.hold if self.args.hold is not None else (2.0 if self.args.short else (20.0, 3.0)[rno % 2])
        hold_until = time.time() + hold
        while time.time() < hold_until:
            time.sleep(min(1.0, max(0.0, hold_until - time.time())))
            self.alive(f"{tag} held full")
        time.sleep(0.5)
        self.alive(f"{tag} before free")
        return hog, hold

    def free_and_resume(self, rno, tag, jobs, first, filler, hog):
        """Space back; the first runs finish on their retries, the others rerun from checkpoints."""
        hog.stop_event.set()
        hog.join(timeout=10)
        os.remove(filler)
        os.remove(os.path.join(self.view, f"filler-top-{rno}"))
        self.suite.log(f"{tag}: space back ({self.tmpfs.free() / MiB:.1f} MiB free)")
        for job, run in first:
            job.finish_run(run, timeout=120)
        self.alive(f"{tag} space back")
        self.suite.log(f"{tag}: first runs: { {job.name: run.process.returncode for job, run in first} }")
        for job in jobs:
            tries = 0
            while not job.done and tries < 4:
                acked = lib.checkpoint_acknowledged(job.checkpoint)
                job.finish_run(job.start(), timeout=180)
                tries += 1
                if job.done:
                    self.resumed_runs.append((job, acked, job.done))
                elif tries < 4:
                    time.sleep(1)
        for job in jobs:
            self.acknowledge(job)
            self.suite.check(f"{tag} {job.name}: finished with the file's hash after {len(job.runs)} runs "
                             f"({'; '.join(job.notes)[:300]})", bool(job.done) and job.done.get("hash") == job.hash)

    def one_round(self, rno):
        tag = f"round {rno + 1}"
        jobs, first, filler = self.fill(rno, tag)
        hog, hold = self.hold_full(rno, tag, first)
        self.free_and_resume(rno, tag, jobs, first, filler, hog)
        ended = [run.process.returncode for _, run in first]
        self.round_notes.append(f"r{rno + 1} held {hold:.0f} s: {ended.count(0)} rode it out, "
                                f"{ended.count(1)} gave up, {sum(1 for j, _ in first if j.paused)} paused")
        self.suite.log(f"{tag}: {self.round_notes[-1]}")
        self.alive(f"{tag} end")

    def after(self):
        """New uploads once the rounds are over, and what the resumed runs sent."""
        jobs = [self.job(f"after-{p}", p, s, self.args.seed * 100 + 50 + i, MiB)
                for i, (p, s) in enumerate((("form", MiB), ("v1", 2 * MiB + 1), ("v2", 2 * MiB + 3)))]
        for job in jobs:
            job.finish_run(job.start(), timeout=120)
            self.acknowledge(job)
        self.suite.check("new uploads succeed once space is back (form, v1, v2)",
                         all(j.done and j.done.get("hash") == j.hash for j in jobs))
        for job, acked, done in self.resumed_runs:  # nothing acknowledged sent again
            self.suite.check(f"{job.name}: the resumed run sent {done['bytesSent']} bytes, its checkpoint held {acked} "
                             f"of {job.size} (resumed={done.get('resumed')})",
                             done["bytesSent"] <= job.size - acked + (64 << 10)
                             and (acked == 0 or done.get("resumed") is True))
        from_checkpoint = [job.name for job, acked, _ in self.resumed_runs if acked > 0]
        self.suite.check(f"interrupted uploads resumed from checkpoints holding acknowledged bytes ({from_checkpoint})",
                         len(from_checkpoint) >= self.args.rounds)
        return from_checkpoint

    def check_stored(self):
        """Objects byte for byte, v2 ids issued while full, records, deliveries, the outbox."""
        probes.check_objects(self.suite, self.up, self.acknowledged, "at the end", self.stats, full=False)
        lost = []
        for upload_id in self.v2_ids_while_full:
            status, _, _ = h.request(self.up.url, "GET", f"/buckets/{h.BUCKET}/objects/~/uploads/{upload_id}",
                                     headers={"Authorization": "UpToken " + h.upload_token()})
            if status != 200:
                lost.append((upload_id, status))
        self.suite.check(f"v2 upload ids acknowledged while full still list their parts "
                         f"({len(self.v2_ids_while_full) - len(lost)}/{len(self.v2_ids_while_full)}; {lost[:3]})",
                         not lost)
        finished = {j.key: j.hash for j in self.jobs_all if j.done}
        records, _ = lib.wait_for_outbox(self.chain, finished)
        lib.check_records(self.suite, records, finished)
        lib.check_delivered_once(self.suite, self.chain, list(finished))
        self.suite.check("up-server outbox: nothing pending or failed", h.outbox_idle(self.up.url))

    def check_server(self):
        """Same pid throughout, only the documented 503, nothing unmapped in the log."""
        self.alive("end")
        self.suite.check(f"up-server never crashed: same pid {self.pid}, /healthz 200 at every step "
                         f"({[m for m, ok in self.healthz if not ok]})", all(ok for _, ok in self.healthz))
        self.suite.check(f"every failing answer was 503 insufficient storage with Retry-After "
                         f"(probes {self.verdicts.counts}; bad: {self.verdicts.bad[:3]})", not self.verdicts.bad)
        self.suite.check(f"the disk-full error was answered (503 seen {self.stats['full_503']} times)",
                         self.stats["full_503"] > 0)
        self.suite.check(f"the SQLite index itself ran out of space: v2 inits refused while full "
                         f"({self.stats.get('init_503', 0)} x 503 after {self.stats.get('init_200', 0)} x 200)",
                         self.stats.get("init_503", 0) > 0)
        statuses, errors = probes.access_log(self.up.log_path)
        self.suite.check(f"no 5xx/6xx but 503 in up-server's access log (statuses {dict(sorted(statuses.items()))})",
                         not {s for s in statuses if s >= 500 and s != 503})
        self.suite.check(f"no 'handler failed' (unmapped error) in up-server's log ({errors[:2]})", not errors)
        return statuses

    def check_index(self):
        """The index against the blobs with up-server stopped (what a restart would open); in a
        mount namespace the tmpfs goes with up-server, so there while it is idle."""
        if self.tmpfs.mode != "mount":
            probes.index_checks(self.suite, self.tmpfs.view())
        self.up.stop()
        self.suite.check("up-server stopped cleanly (SIGTERM, exit 0)", self.up.process.returncode == 0)
        if self.tmpfs.mode == "mount":
            probes.index_checks(self.suite, self.tmpfs.view())
        self.chain.biz.stop()
        self.chain.proxy.close()

    def run(self):
        self.before()
        for rno in range(self.args.rounds):
            self.one_round(rno)
        from_checkpoint = self.after()
        self.check_stored()
        statuses = self.check_server()
        self.check_index()
        index_ok = all(ok for n, ok in self.suite.checks if n.startswith("index:"))
        return (f"{self.args.rounds} rounds on a {self.args.mount_mb} MiB tmpfs ({self.tmpfs.mode}): "
                f"{'; '.join(self.round_notes)}; {len(self.jobs_all)} up-cli uploads, {len(from_checkpoint)} resumed "
                f"from checkpoints holding acknowledged bytes, all with the right hash; {len(self.acknowledged)} objects "
                f"byte-exact; probes while full {self.verdicts.counts} (v2 init 503 {self.stats.get('init_503', 0)}, "
                f"large download 503 {self.stats['downloads_503']}); access log {dict(sorted(statuses.items()))}; pid "
                f"{'unchanged' if all(ok for _, ok in self.healthz) else 'CHANGED'}, index "
                f"{'consistent' if index_ok else 'INCONSISTENT'}")


def parse_args():
    ap = h.suite_arguments(__doc__, "1 round on a 48 MiB tmpfs (default: 6 rounds on 224 MiB)")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--mount-mb", type=int)
    ap.add_argument("--mode", choices=["auto", "mount", "unshare"], default="auto",
                    help="how to get the tmpfs: plain mount, a private mount namespace, or the first that works")
    ap.add_argument("--hold", type=float,
                    help="seconds the disk stays full each round (default: 2; full run: 20 and 3 in turn, so the "
                         "clients give up in some rounds and ride it out with their retries in others)")
    ap.add_argument("--allow-skip", action="store_true", help="exit 77 (SKIP) where no tmpfs can be mounted")
    return h.short_or_full(ap.parse_args(), rounds=(1, 6), mount_mb=(48, 224))


def main():
    args = parse_args()
    suite = h.Suite(SUITE, args, "upgate-chaos-disk-")
    tmpfs = Tmpfs(os.path.join(suite.work, "mnt"), args.mount_mb)
    atexit.register(tmpfs.unmount)  # on any exit; a busy mount falls back to a lazy unmount
    if tmpfs.setup(args.mode) is None:
        why = "; ".join(tmpfs.why)
        print(f"{SUITE}: SKIP cannot mount a tmpfs here ({why})"
              + ("" if args.allow_skip else " (not allowed: pass --allow-skip)"), flush=True)
        shutil.rmtree(suite.work, ignore_errors=True)
        if not args.allow_skip:
            return 1
        h.note_skip(SUITE, "no tmpfs can be mounted here")
        return 77  # skipped (automake's convention), see scripts/chaos/run
    bins = suite.bins
    suite.log(f"seed {args.seed}, {args.rounds} rounds, {args.mount_mb} MiB tmpfs ({tmpfs.mode}), work {suite.work}")
    extra, state = "", None
    with suite:
        state = DiskFull(suite, bins, tmpfs)
        extra = state.run()
    if state:
        state.chain.up.stop()
        state.chain.biz.stop()
    tmpfs.unmount()
    return suite.finish(extra)


if __name__ == "__main__":
    sys.exit(main())
