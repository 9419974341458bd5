"""disk-full: up-server's data dir (its blobs AND its SQLite index, `<dataDir>/blobs` and
`<dataDir>/index.sqlite3`) sits on a small tmpfs that fills up while uploads run.

The mount: a plain `mount -t tmpfs -o size=<M>m` first; where that is refused, the suite's
up-server runs inside a private mount namespace (`unshare -m`, or `unshare -rm` without root)
that mounts the tmpfs before exec'ing up-server, and the suite reaches the mount through
/proc/<pid>/root. Neither possible: a SKIP line, exit 77 with --allow-skip, else exit 1. The mount
is always unmounted on exit. biz-server keeps its data on the normal disk.

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
every object acknowledged (200) before or during the full disk stats with its hash and
downloads byte for byte (during the full disk too, except a large multi-segment download,
which needs scratch space on the data disk: 503 is allowed for it); every v2 upload id issued
while full still lists its parts; every resumed run resends at most the bytes its checkpoint
did not hold, and ends with the file's hash; exactly one biz-server record per finished upload
and nothing pending or failed in the outbox; after up-server stops, the index passes
PRAGMA integrity_check and foreign_key_check, every object's segments exist on disk at their
length, every block's blob is exactly as long as its acknowledged offset, every part's blob as
long as the part, and no blob file is left that nothing references.
"""
import argparse
import errno
import hashlib
import http.client
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid

from qiniu import Auth

import chaoslib as lib

SUITE = "disk-full"
MiB = 1 << 20
RESERVE = 10 * MiB  # kept free of the rounds' uploads: probes, the new uploads at the end, the index


# ---------------------------------------------------------------- the tmpfs

class Tmpfs:
    """A tmpfs of `size_mb` at `path`: mounted here (mode "mount") or only inside the up-server's
    own mount namespace (mode "unshare"/"unshare-user"), reached through /proc/<pid>/root."""

    def __init__(self, path, size_mb):
        self.path, self.size_mb, self.mode, self.pid = path, size_mb, None, None
        os.makedirs(path, exist_ok=True)

    def _mount_cmd(self, size_mb=None):
        return ["mount", "-t", "tmpfs", "-o", f"size={size_mb or self.size_mb}m,mode=0755", "tmpfs", self.path]

    def setup(self, want):
        """Picks the first mode that works (`want` = auto, mount or unshare); None if none does."""
        self.why = []
        if want in ("auto", "mount"):
            if self._try(self._mount_cmd()):
                self.mode = "mount"
                return self.mode
        if want in ("auto", "unshare"):
            probe = " ".join(self._mount_cmd(1)) + " && test -w " + self.path
            for mode, flags in (("unshare", ["-m"]), ("unshare-user", ["-r", "-m"])):
                if self._try(["unshare", *flags, "sh", "-c", probe]):
                    self.mode, self.flags = mode, flags
                    return self.mode
        return None

    def _try(self, argv):
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as e:
            self.why.append(f"{argv[0]}: {e}")
            return False
        if r.returncode != 0:
            self.why.append(f"{' '.join(argv[:3])}: {r.stderr.strip()[:100]}")
        return r.returncode == 0

    def wrap(self, binary, work):
        """The program to start up-server with: itself, or a script that mounts the tmpfs in a new
        mount namespace and execs it (same pid: unshare and sh both exec)."""
        if self.mode == "mount":
            return binary
        script = os.path.join(work, "up-server-in-namespace")
        with open(script, "w") as f:
            f.write("#!/bin/sh\n"
                    f"exec unshare {' '.join(self.flags)} sh -c '"
                    f"{' '.join(self._mount_cmd())} && exec \"$0\" \"$@\"' {binary} \"$@\"\n")
        os.chmod(script, 0o755)
        return script

    def view(self):
        """Where this process sees the mount."""
        if self.mode == "mount":
            return self.path
        return f"/proc/{self.pid}/root{self.path}"

    def free(self):
        st = os.statvfs(self.view())
        return st.f_bavail * st.f_frsize

    def unmount(self):
        if self.mode == "mount":
            for argv in (["umount", self.path], ["umount", "-l", self.path]):
                if subprocess.run(argv, capture_output=True).returncode == 0:
                    self.mode = None
                    return


def write_filler(path, size):
    """Writes `size` bytes (stops early at ENOSPC); returns bytes written."""
    written = 0
    piece = b"\xa5" * MiB
    with open(path, "ab", buffering=0) as f:
        while written < size:
            n = min(MiB, size - written)
            try:
                written += f.write(piece[:n])
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
                break
    return written


def top_up(path):
    """Appends to `path` until the file system refuses even one page: the disk is full."""
    written = 0
    with open(path, "ab", buffering=0) as f:
        for size in (MiB, 64 << 10, 4096):
            while True:
                try:
                    written += f.write(b"\x5a" * size)
                except OSError as e:
                    if e.errno != errno.ENOSPC:
                        raise
                    break
    return written


class Hog(threading.Thread):
    """Keeps the disk full: takes every page that frees up (a failed upload's blob being removed)
    into its file, as another program on the same disk would, until stopped."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path, self.taken, self.stop_event = path, 0, threading.Event()

    def run(self):
        while not self.stop_event.is_set():
            self.taken += top_up(self.path)
            self.stop_event.wait(0.01)


# ---------------------------------------------------------------- raw HTTP probes

def request(base, method, path, body=b"", headers=None, timeout=60):
    """(status, headers dict lower-cased, body bytes); status None on a connection error."""
    host, port = base.split("//", 1)[1].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=dict(headers or {}, **{"Content-Length": str(len(body))}))
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    except (OSError, http.client.HTTPException):
        return None, {}, b""
    finally:
        conn.close()


def form_body(token, key, data):
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in (("token", token), ("key", key)):
        parts.append(f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n".encode())
    parts.append(f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"probe.bin\"\r\n"
                 f"Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


class Verdicts:
    """Every answer of the probes: 200, or the documented disk-full error; anything else is bad."""

    def __init__(self):
        self.counts, self.bad, self.lock = {}, [], threading.Lock()

    def judge(self, what, status, headers, body):
        with self.lock:
            label = str(status)
            self.counts[label] = self.counts.get(label, 0) + 1
            if status == 200:
                return True
            ok = False
            try:
                ok = (status == 503 and json.loads(body) == {"error": "insufficient storage"}
                      and int(headers.get("retry-after", "0")) > 0 and headers.get("x-reqid")
                      and headers.get("content-type", "").startswith("application/json"))
            except ValueError:
                pass
            if not ok:
                self.bad.append(f"{what}: {status} {headers.get('retry-after')} {body[:120]!r}")
            return False


# ---------------------------------------------------------------- the suite

class Job:
    """One upload by up-cli: its file, key, command and runs."""

    def __init__(self, name, proto, size, work, seed, cli, biz, unit, rate=None):
        self.name, self.proto, self.size = name, proto, size
        self.path = lib.make_file(os.path.join(work, f"{name}.bin"), size, seed=seed)
        self.sha1 = lib.sha1_file(self.path)
        self.hash = lib.v2_hash(self.path, unit) if proto == "v2" else lib.etag_of(cli, self.path)
        self.key = f"demo/chaos/disk-full-{seed}-{name}.bin"
        self.checkpoint = os.path.join(work, f"{name}.ckpt.json")
        self.argv = [cli, "put", self.path, "--key", self.key, "--biz", biz.url, "--api-key", lib.API_KEY,
                     "--checkpoint", self.checkpoint, "--protocol", proto, "--json"]
        # A rate-limited upload, one chunk at a time, is sure to be half-way (acknowledged chunks
        # in its checkpoint) when the disk fills: the one to pause and resume.
        self.argv += ["--concurrency", "1", "--limit-rate", str(rate)] if rate else ["--concurrency", "2"]
        self.pausable = bool(rate)
        if proto == "v1":
            self.argv += ["--chunk-size", str(unit)]
        elif proto == "v2":
            self.argv += ["--part-size", str(unit)]
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--short", action="store_true", help="1 round on a 48 MiB tmpfs (default: 6 rounds on 224 MiB)")
    ap.add_argument("--bin", help="directory of up-server, biz-server, up-cli (default: release build)")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--mount-mb", type=int)
    ap.add_argument("--mode", choices=["auto", "mount", "unshare"], default="auto",
                    help="how to get the tmpfs: plain mount, a private mount namespace, or the first that works")
    ap.add_argument("--hold", type=float,
                    help="seconds the disk stays full each round (default: 2; full run: 20 and 3 in turn, so the "
                         "clients give up in some rounds and ride it out with their retries in others)")
    ap.add_argument("--allow-skip", action="store_true", help="exit 77 (SKIP) where no tmpfs can be mounted")
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    rounds = args.rounds or (1 if args.short else 6)
    mount_mb = args.mount_mb or (48 if args.short else 224)
    work = tempfile.mkdtemp(prefix="upgate-chaos-disk-")
    tmpfs = Tmpfs(os.path.join(work, "mnt"), mount_mb)
    import atexit
    atexit.register(tmpfs.unmount)  # registered before chaoslib's: runs after the servers are killed
    lib.install_cleanup()
    mode = tmpfs.setup(args.mode)
    if mode is None:
        print(f"{SUITE}: SKIP cannot mount a tmpfs here ({'; '.join(tmpfs.why)})"
              + ("" if args.allow_skip else " (not allowed: pass --allow-skip)"), flush=True)
        shutil.rmtree(work, ignore_errors=True)
        return 77 if args.allow_skip else 1  # 77: skipped (automake's convention), see scripts/chaos/run
    bins = lib.bin_dir(args.bin)
    rnd = random.Random(args.seed)
    started = time.time()
    checks, extra = [], ""
    lib.log(SUITE, f"seed {args.seed}, {rounds} rounds, {mount_mb} MiB tmpfs ({mode}), work {work}")
    cli = os.path.join(bins, "up-cli")
    auth = Auth(lib.AK, lib.SK)
    up = biz = None
    verdicts = Verdicts()
    acknowledged = {}  # key -> (size, sha1, hash) of every object a 200 acknowledged
    v2_ids_while_full = []
    jobs_all, resumed_runs, stats = [], [], {"full_503": 0, "full_200": 0, "downloads_503": 0}
    round_notes = []
    try:
        data_dir = os.path.join(tmpfs.path, "up")
        up = lib.Server("up-server", tmpfs.wrap(os.path.join(bins, "up-server"), work), lib.up_config(work),
                        lib.free_port(), data_dir, os.path.join(work, "up-server.log"))
        up.start()
        tmpfs.pid = up.process.pid
        pid = up.process.pid
        view = tmpfs.view()
        biz = lib.Server("biz-server", os.path.join(bins, "biz-server"), lib.biz_config(work), lib.free_port(),
                         os.path.join(work, "biz"), os.path.join(work, "biz-server.log"),
                         env={"UPGATE_UP_HOSTS": up.url}).start()
        healthz = []

        def alive(moment):
            status, _ = lib.http_get(up.url + "/healthz", timeout=10)
            healthz.append((moment, up.alive() and up.process.pid == pid and status == 200))

        # Before: one object per protocol, acknowledged on a disk with room.
        # The 9 MiB v1 object has three segments: its download is joined in a scratch file on
        # the data disk, so while the disk is full it may answer 503 (documented), never 5xx else.
        before = [Job(f"before-{i}-{p}", p, s, work, args.seed * 100 + i, cli, biz, MiB)
                  for i, (p, s) in enumerate((("form", 512 << 10), ("v1", 2 * MiB + 5), ("v2", 2 * MiB + 7),
                                           ("v1", 9 * MiB + 11)))]
        for job in before:
            job.finish_run(job.start(), timeout=120)
        checks.append(("uploads before the disk fills succeed", all(j.done for j in before)))
        for job in before:
            if job.done:
                acknowledged[job.key] = (job.size, job.sha1, job.hash)
        jobs_all += before

        for rno in range(rounds):
            tag = f"round {rno + 1}"
            # This round's uploads must fit once space is back (they all finish), with room kept
            # for the later rounds, the probes and the new uploads at the end; the filler leaves
            # a third of them free, so the disk runs out while they are under way.
            free = tmpfs.free()
            budget = int((free - RESERVE) / (rounds - rno) * 0.8)
            if budget < 8 * MiB:
                raise RuntimeError(f"{tag}: only {free / MiB:.1f} MiB free; use a bigger --mount-mb")
            filler = os.path.join(view, f"filler-{rno}")
            write_filler(filler, max(0, free - budget // 3))
            lib.log(SUITE, f"{tag}: {free / MiB:.1f} MiB free, uploading {budget / MiB:.1f} MiB, filler leaves "
                           f"{tmpfs.free() / MiB:.1f} MiB")
            big = int(budget * 0.6 / 4)
            plan = [("v1", big), ("v2", big), ("v1", big + 123457), ("v2", big - 98765)]
            forms = 4 if args.short else 6
            plan += [("form", min(3 * MiB, int(budget * 0.35 / forms * rnd.uniform(0.7, 1.0)))) for _ in range(forms)]
            jobs = []
            for i, (proto, size) in enumerate(plan):
                unit = MiB if proto == "v1" else 2 * MiB
                rate = max(256 << 10, size // 6) if i < 2 else None  # the first v1 and v2: ~6 s each
                jobs.append(Job(f"r{rno}-{i}-{proto}", proto, size, work, args.seed * 1000 + rno * 100 + i, cli, biz,
                                unit, rate))
            jobs_all += jobs
            log_mark = os.path.getsize(up.log_path)
            # The resumable ones first, until each holds an acknowledged chunk (so a pause leaves a
            # checkpoint worth resuming) or the space is nearly gone; then the form uploads.
            first = [(job, job.start()) for job in jobs if job.proto != "form"]
            deadline = time.time() + 15
            while time.time() < deadline and tmpfs.free() > 2 * MiB and \
                    not all(lib.checkpoint_acknowledged(job.checkpoint) > 0 for job, _ in first if job.pausable):
                time.sleep(0.02)
            first += [(job, job.start()) for job in jobs if job.proto == "form"]
            # Until the space runs out (up-server answered its first 503, or the disk is nearly
            # full) or everything ended.
            deadline = time.time() + 40
            while time.time() < deadline and tmpfs.free() > 256 << 10 and not saw_503(up.log_path, log_mark) \
                    and any(run.process.poll() is None for _, run in first):
                time.sleep(0.05)
            lib.log(SUITE, f"{tag}: {tmpfs.free() >> 10} KiB free; topping up")
            hog = Hog(os.path.join(view, f"filler-top-{rno}"))
            hog.start()
            time.sleep(0.2)
            lib.log(SUITE, f"{tag}: disk full ({hog.taken >> 10} KiB more filler, {tmpfs.free()} bytes free)")
            alive(f"{tag} full")
            # One v1 and one v2 first run paused (Ctrl-C keeps the checkpoint); the rest carry on.
            for proto in ("v1", "v2"):
                running = [(job, run) for job, run in first if job.proto == proto and run.process.poll() is None]
                # The rate-limited one, else one whose checkpoint holds the most acknowledged bytes.
                running.sort(key=lambda jr: (not jr[0].pausable, -lib.checkpoint_acknowledged(jr[0].checkpoint)))
                for job, run in running[:1]:
                    run.process.send_signal(signal.SIGINT)
                    job.paused = True
            # Probes while the disk is full.
            full_probes(up, auth, verdicts, acknowledged, v2_ids_while_full, stats, rno, rnd, args.short)
            alive(f"{tag} after probes")
            check_objects(up, acknowledged, checks, f"{tag}, disk full", stats, full=True)
            # Hold the disk full a while: the clients keep retrying (503, Retry-After) and some
            # give up; up-server must keep answering.
            hold = args.hold if args.hold is not None else (2.0 if args.short else (20.0, 3.0)[rno % 2])
            hold_until = time.time() + hold
            while time.time() < hold_until:
                time.sleep(min(1.0, max(0.0, hold_until - time.time())))
                alive(f"{tag} held full")
            time.sleep(0.5)
            alive(f"{tag} before free")
            # Free the space.
            hog.stop_event.set()
            hog.join(timeout=10)
            os.remove(filler)
            os.remove(os.path.join(view, f"filler-top-{rno}"))
            lib.log(SUITE, f"{tag}: space back ({tmpfs.free() / MiB:.1f} MiB free)")
            for job, run in first:
                job.finish_run(run, timeout=120)
            alive(f"{tag} space back")
            statuses = {job.name: run.process.returncode for job, run in first}
            lib.log(SUITE, f"{tag}: first runs: {statuses}")
            # The same command again for every upload not finished: it must resume.
            for job in jobs:
                tries = 0
                while not job.done and tries < 4:
                    acked = lib.checkpoint_acknowledged(job.checkpoint)
                    run = job.start()
                    job.finish_run(run, timeout=180)
                    tries += 1
                    if job.done:
                        resumed_runs.append((job, acked, job.done))
                    elif tries < 4:
                        time.sleep(1)
            for job in jobs:
                if job.done:
                    acknowledged[job.key] = (job.size, job.sha1, job.hash)
                checks.append((f"{tag} {job.name}: finished with the file's hash after {len(job.runs)} runs "
                               f"({'; '.join(job.notes)[:300]})",
                               bool(job.done) and job.done.get("hash") == job.hash))
            ended = [run.process.returncode for _, run in first]
            round_notes.append(f"r{rno + 1} held {hold:.0f} s: {ended.count(0)} rode it out, "
                               f"{ended.count(1)} gave up, {sum(1 for j, _ in first if j.paused)} paused")
            lib.log(SUITE, f"{tag}: {round_notes[-1]}")
            alive(f"{tag} end")

        # New uploads after the last round.
        after = [Job(f"after-{p}", p, s, work, args.seed * 100 + 50 + i, cli, biz, MiB)
                 for i, (p, s) in enumerate((("form", MiB), ("v1", 2 * MiB + 1), ("v2", 2 * MiB + 3)))]
        for job in after:
            job.finish_run(job.start(), timeout=120)
            if job.done:
                acknowledged[job.key] = (job.size, job.sha1, job.hash)
        jobs_all += after
        checks.append(("new uploads succeed once space is back (form, v1, v2)",
                       all(j.done and j.done.get("hash") == j.hash for j in after)))

        # Resumed runs: nothing acknowledged was sent again.
        for job, acked, done in resumed_runs:
            checks.append((f"{job.name}: the resumed run sent {done['bytesSent']} bytes, its checkpoint held {acked} "
                           f"of {job.size} (resumed={done.get('resumed')})",
                           done["bytesSent"] <= job.size - acked + (64 << 10) and (acked == 0 or done.get("resumed") is True)))
        from_checkpoint = [job.name for job, acked, _ in resumed_runs if acked > 0]
        checks.append((f"interrupted uploads resumed from checkpoints holding acknowledged bytes ({from_checkpoint})",
                       len(from_checkpoint) >= rounds))

        # Everything acknowledged, byte for byte.
        check_objects(up, acknowledged, checks, "at the end", stats, full=False)
        # v2 upload ids issued while the disk was full survived.
        lost_ids = []
        for upload_id in v2_ids_while_full:
            path = f"/buckets/{lib.BUCKET}/objects/~/uploads/{upload_id}"
            status, _, _ = request(up.url, "GET", path, headers={"Authorization": "UpToken " + auth.upload_token(lib.BUCKET)})
            if status != 200:
                lost_ids.append((upload_id, status))
        checks.append((f"v2 upload ids acknowledged while full still list their parts "
                       f"({len(v2_ids_while_full) - len(lost_ids)}/{len(v2_ids_while_full)}; {lost_ids[:3]})",
                       not lost_ids))

        # Callbacks: exactly one record per finished upload (bounded wait for the outbox).
        finished = {j.key: j.hash for j in jobs_all if j.done}
        deadline, records = time.time() + 60, []
        while time.time() < deadline:
            records = lib.biz_records(biz.url) or []
            pending = lib.outbox(up.url, "pending")
            if set(finished) <= {r["key"] for r in records} and pending is not None and not pending.get("items"):
                break
            time.sleep(0.5)
        by_key = {}
        for r in records:
            by_key.setdefault(r["key"], []).append(r)
        wrong = [k for k, h in finished.items() if len(by_key.get(k, [])) != 1 or by_key[k][0]["hash"] != h]
        checks.append((f"exactly one biz-server record with the right hash per finished upload "
                       f"({len(finished) - len(wrong)}/{len(finished)}; wrong: {wrong[:3]})", not wrong))
        pending, failed = lib.outbox(up.url, "pending"), lib.outbox(up.url, "failed")
        checks.append(("up-server outbox: nothing pending or failed",
                       pending is not None and not pending.get("items") and failed is not None
                       and not failed.get("items")))

        alive("end")
        checks.append((f"up-server never crashed: same pid {pid}, /healthz 200 at every step "
                       f"({[m for m, ok in healthz if not ok]})", all(ok for _, ok in healthz)))
        checks.append((f"every failing answer was 503 insufficient storage with Retry-After "
                       f"(probes {verdicts.counts}; bad: {verdicts.bad[:3]})", not verdicts.bad))
        checks.append((f"the disk-full error was answered (503 seen {stats['full_503']} times)", stats["full_503"] > 0))
        checks.append((f"the SQLite index itself ran out of space: v2 inits refused while full "
                       f"({stats.get('init_503', 0)} x 503 after {stats.get('init_200', 0)} x 200)",
                       stats.get("init_503", 0) > 0))
        log_statuses, log_errors = access_log(up.log_path)
        unexpected = {s: n for s, n in log_statuses.items() if s >= 500 and s != 503}
        checks.append((f"no 5xx/6xx but 503 in up-server's access log (statuses {dict(sorted(log_statuses.items()))})",
                       not unexpected))
        checks.append((f"no 'handler failed' (unmapped error) in up-server's log ({log_errors[:2]})", not log_errors))

        # The index against the blobs: with up-server stopped (what a restart would open); in a
        # mount namespace the tmpfs goes with up-server, so there while it is idle.
        if mode != "mount":
            index_checks(tmpfs.view(), checks, work)
        up.stop()
        checks.append(("up-server stopped cleanly (SIGTERM, exit 0)", up.process.returncode == 0))
        if mode == "mount":
            index_checks(tmpfs.view(), checks, work)
        biz.stop()
        extra = (f"{rounds} rounds on a {mount_mb} MiB tmpfs ({mode}): {'; '.join(round_notes)}; "
                 f"{len(jobs_all)} up-cli uploads, {len(from_checkpoint)} resumed from checkpoints holding "
                 f"acknowledged bytes, all with the right hash; {len(acknowledged)} objects byte-exact; probes while "
                 f"full {verdicts.counts} (v2 init 503 {stats.get('init_503', 0)}, large download 503 "
                 f"{stats['downloads_503']}); access log {dict(sorted(log_statuses.items()))}; pid "
                 f"{'unchanged' if all(ok for _, ok in healthz) else 'CHANGED'}, index "
                 f"{'consistent' if all(ok for n, ok in checks if n.startswith('index:')) else 'INCONSISTENT'}")
    except Exception as e:
        import traceback
        traceback.print_exc()
        checks.append((f"harness error: {e!r}", False))
    finally:
        for server in (up, biz):
            if server:
                server.stop()
        tmpfs.unmount()
    return lib.finish(SUITE, checks, extra, started, args.seed, work, args.keep)


def full_probes(up, auth, verdicts, acknowledged, v2_ids, stats, rno, rnd, short):
    """Requests of every kind while the disk is full: each must be 200 or the documented 503."""
    token = auth.upload_token(lib.BUCKET)
    upauth = {"Authorization": "UpToken " + token}
    n = 6 if short else 20
    for i in range(n):
        data = rnd.randbytes(rnd.choice((1, 4096, 65536, 300000)))
        key = f"demo/chaos/disk-full-probe-{rno}-{i}-{uuid.uuid4().hex[:6]}.bin"
        body, ctype = form_body(auth.upload_token(lib.BUCKET, key, 3600), key, data)
        status, headers, reply = request(up.url, "POST", "/", body, {"Content-Type": ctype})
        if verdicts.judge("form", status, headers, reply):
            acknowledged[key] = (len(data), hashlib.sha1(data).hexdigest(), json.loads(reply)["hash"])
            stats["full_200"] += 1
        elif status == 503:
            stats["full_503"] += 1
        # v1: a whole small block in one mkblk.
        block = rnd.randbytes(rnd.choice((1024, 65536, MiB)))
        status, headers, reply = request(up.url, "POST", f"/mkblk/{len(block)}", block,
                                         dict(upauth, **{"Content-Type": "application/octet-stream"}))
        if verdicts.judge("mkblk", status, headers, reply):
            stats["full_200"] += 1
        elif status == 503:
            stats["full_503"] += 1
    # v2 inits write index rows only: this is where SQLite meets the full disk (its log grows
    # until a checkpoint, which cannot grow the database file). Until a few are refused.
    refused = 0
    for i in range(3000):
        if refused >= (5 if short else 20):
            break
        status, headers, reply = request(up.url, "POST", f"/buckets/{lib.BUCKET}/objects/~/uploads", b"", upauth)
        if not verdicts.judge("v2 init", status, headers, reply):
            stats["full_503"] += status == 503
            stats["init_503"] = stats.get("init_503", 0) + (status == 503)
            refused += 1
            continue
        stats["init_200"] = stats.get("init_200", 0) + 1
        upload_id = json.loads(reply)["uploadId"]
        v2_ids.append(upload_id)
        if i % 10 == 0:
            part = rnd.randbytes(65536)
            status, headers, reply = request(
                up.url, "PUT", f"/buckets/{lib.BUCKET}/objects/~/uploads/{upload_id}/1", part,
                dict(upauth, **{"Content-Type": "application/octet-stream",
                                "Content-MD5": hashlib.md5(part).hexdigest()}))
            if not verdicts.judge("v2 part", status, headers, reply):
                stats["full_503"] += status == 503


def saw_503(log_path, offset):
    """Whether up-server's access log has a 503 after `offset`."""
    with open(log_path, "rb") as f:
        f.seek(offset)
        return b'"status":503' in f.read()


def check_objects(up, acknowledged, checks, moment, stats, full):
    """Every acknowledged object stats with its hash and downloads byte for byte."""
    bad = []
    for key, (size, sha1, etag) in sorted(acknowledged.items()):
        status, st = lib.stat(up.url, key)
        if status != 200 or st.get("hash") != etag or st.get("fsize") != size:
            bad.append(f"stat {key}: {status} {st}")
            continue
        status, body = lib.download(up.url, key)
        if full and status == 503 and size > 8 * MiB and json.loads(body or b"{}").get("error") == "insufficient storage":
            stats["downloads_503"] += 1  # needs scratch space on the full disk; documented
            continue
        if status != 200 or len(body) != size or hashlib.sha1(body).hexdigest() != sha1:
            bad.append(f"download {key}: {status} {len(body)} bytes")
    scratch = f", large downloads 503 while full so far: {stats['downloads_503']}" if full else ""
    checks.append((f"{moment}: every acknowledged object ({len(acknowledged)}) stats with its hash and downloads "
                   f"byte for byte ({bad[:3]}{scratch})", not bad))


def access_log(path):
    statuses, errors = {}, []
    with open(path, "rb") as f:
        for line in f:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("msg") == "request" and isinstance(entry.get("status"), int):
                statuses[entry["status"]] = statuses.get(entry["status"], 0) + 1
            elif entry.get("msg") in ("handler failed",) or entry.get("level") == "error":
                errors.append(f"{entry.get('msg')}: {str(entry.get('error'))[:160]}")
    return statuses, errors


def index_checks(data_root, checks, copy_dir):
    """The SQLite index against the blob files (up-server stopped)."""
    data_dir = os.path.join(data_root, "up")
    db_path = os.path.join(data_dir, "index.sqlite3")
    if data_root.startswith("/proc/"):
        # SQLite resolves symlinks in a path, and /proc/<pid>/root would resolve to our own root:
        # check a copy (up-server is idle; the log comes along and is replayed on open).
        copy = os.path.join(copy_dir, "index-copy")
        os.makedirs(copy, exist_ok=True)
        for suffix in ("", "-wal"):
            if os.path.exists(db_path + suffix):
                shutil.copyfile(db_path + suffix, os.path.join(copy, "index.sqlite3" + suffix))
        db_path = os.path.join(copy, "index.sqlite3")
    db = sqlite3.connect(db_path)
    try:
        integrity = db.execute("PRAGMA integrity_check").fetchall()
        fks = db.execute("PRAGMA foreign_key_check").fetchall()
        checks.append((f"index: PRAGMA integrity_check ok, foreign_key_check empty ({integrity[:2]}, {fks[:2]})",
                       integrity == [("ok",)] and not fks))

        def blob_size(hex_id):
            try:
                return os.path.getsize(os.path.join(data_dir, "blobs", hex_id[:2], hex_id))
            except OSError:
                return None

        short_segments = [(b, n, blob_size(b)) for b, n in db.execute("SELECT blob, length FROM segments")
                          if (blob_size(b) or -1) < n]
        checks.append((f"index: every object segment's blob holds its bytes ({short_segments[:3]})",
                       not short_segments))
        blocks = [(b, r, blob_size(b)) for b, r in db.execute("SELECT blob, received FROM blocks")
                  if blob_size(b) != r]
        checks.append((f"index: every block's blob is exactly its acknowledged length ({blocks[:3]})", not blocks))
        parts = [(b, s, blob_size(b)) for b, s in db.execute("SELECT blob, size FROM parts") if blob_size(b) != s]
        checks.append((f"index: every part's blob is exactly the part's size ({parts[:3]})", not parts))
        referenced = {r[0] for r in db.execute("SELECT blob FROM segments UNION SELECT blob FROM blocks "
                                               "UNION SELECT blob FROM parts")}
        on_disk = set()
        for shard in os.listdir(os.path.join(data_dir, "blobs")):
            on_disk.update(os.listdir(os.path.join(data_dir, "blobs", shard)))
        orphans = on_disk - referenced
        checks.append((f"no orphan blob left by a failed write ({len(orphans)} of {len(on_disk)} files)", not orphans))
    finally:
        db.close()


if __name__ == "__main__":
    sys.exit(main())
