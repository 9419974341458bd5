"""What the disk-full suite (see disk_full.py) sends and reads while the disk is full and after:
the probes and their verdicts, the acknowledged objects, up-server's access log, and its index
against the blob files and rows."""
import hashlib
import json
import os
import shutil
import sqlite3
import threading
import uuid

import harness as h

MiB = 1 << 20


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



def full_probes(up, verdicts, acknowledged, v2_ids, stats, rno, rnd, short):
    """Requests of every kind while the disk is full: each must be 200 or the documented 503."""
    token = h.upload_token()
    upauth = {"Authorization": "UpToken " + token}
    n = 6 if short else 20
    for i in range(n):
        data = rnd.randbytes(rnd.choice((1, 4096, 65536, 300000)))
        key = f"demo/chaos/disk-full-probe-{rno}-{i}-{uuid.uuid4().hex[:6]}.bin"
        body, ctype = h.form_body([("token", h.upload_token(key)), ("key", key)], data, filename="probe.bin")
        status, headers, reply = h.request(up.url, "POST", "/", body, {"Content-Type": ctype})
        if verdicts.judge("form", status, headers, reply):
            acknowledged[key] = (len(data), hashlib.sha1(data).hexdigest(), json.loads(reply)["hash"])
            stats["full_200"] += 1
        elif status == 503:
            stats["full_503"] += 1
        # v1: a whole small block in one mkblk.
        block = rnd.randbytes(rnd.choice((1024, 65536, MiB)))
        status, headers, reply = h.request(up.url, "POST", f"/mkblk/{len(block)}", block,
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
        status, headers, reply = h.request(up.url, "POST", f"/buckets/{h.BUCKET}/objects/~/uploads", b"", upauth)
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
                up.url, "PUT", f"/buckets/{h.BUCKET}/objects/~/uploads/{upload_id}/1", part,
                dict(upauth, **{"Content-Type": "application/octet-stream",
                                "Content-MD5": hashlib.md5(part).hexdigest()}))
            if not verdicts.judge("v2 part", status, headers, reply):
                stats["full_503"] += status == 503


def saw_503(log_path, offset):
    """Whether up-server's access log has a 503 after `offset`."""
    with open(log_path, "rb") as f:
        f.seek(offset)
        return b'"status":503' in f.read()


def check_objects(suite, up, acknowledged, moment, stats, full):
    """Every acknowledged object stats with its hash and downloads byte for byte."""
    bad = []
    for key, (size, sha1, etag) in sorted(acknowledged.items()):
        status, st = h.stat(up.url, key)
        if status != 200 or st.get("hash") != etag or st.get("fsize") != size:
            bad.append(f"stat {key}: {status} {st}")
            continue
        status, body = h.download(up.url, key)
        if full and status == 503 and size > 8 * MiB and json.loads(body or b"{}").get("error") == "insufficient storage":
            stats["downloads_503"] += 1  # needs scratch space on the full disk; documented
            continue
        if status != 200 or len(body) != size or hashlib.sha1(body).hexdigest() != sha1:
            bad.append(f"download {key}: {status} {len(body)} bytes")
    scratch = f", large downloads 503 while full so far: {stats['downloads_503']}" if full else ""
    suite.check(f"{moment}: every acknowledged object ({len(acknowledged)}) stats with its hash and downloads "
                f"byte for byte ({bad[:3]}{scratch})", not bad)


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


def readable_copy(suite, path):
    """`path` where SQLite can open it: SQLite resolves symlinks in a path, and /proc/<pid>/root
    would resolve to our own root, so such a file is copied first (up-server is idle; the log
    comes along and is replayed on open)."""
    if not path.startswith("/proc/"):
        return path
    copy = os.path.join(suite.work, "sqlite-copies")
    os.makedirs(copy, exist_ok=True)
    name = os.path.basename(path)
    for suffix in ("", "-wal"):
        if os.path.exists(path + suffix):
            shutil.copyfile(path + suffix, os.path.join(copy, name + suffix))
    return os.path.join(copy, name)


def inline_sizes(suite, data_dir):
    """Blob id -> length of the small blobs kept as rows of `blobs/inline.sqlite3`."""
    path = os.path.join(data_dir, "blobs", "inline.sqlite3")
    if not os.path.exists(path):
        return {}
    db = sqlite3.connect(readable_copy(suite, path))
    try:
        return dict(db.execute("SELECT id, length(bytes) FROM blobs"))
    finally:
        db.close()


def index_checks(suite, data_root):
    """The SQLite index against the blob files and rows (up-server stopped)."""
    data_dir = os.path.join(data_root, "up")
    db = sqlite3.connect(readable_copy(suite, os.path.join(data_dir, "index.sqlite3")))
    rows = inline_sizes(suite, data_dir)
    try:
        integrity = db.execute("PRAGMA integrity_check").fetchall()
        fks = db.execute("PRAGMA foreign_key_check").fetchall()
        suite.check(f"index: PRAGMA integrity_check ok, foreign_key_check empty ({integrity[:2]}, {fks[:2]})",
                       integrity == [("ok",)] and not fks)

        def blob_size(hex_id):
            if hex_id in rows:  # a row is the blob while it exists (FileBlockStore)
                return rows[hex_id]
            try:
                return os.path.getsize(os.path.join(data_dir, "blobs", hex_id[:2], hex_id))
            except OSError:
                return None

        short_segments = [(b, n, blob_size(b)) for b, n in db.execute("SELECT blob, length FROM segments")
                          if (blob_size(b) or -1) < n]
        suite.check(f"index: every object segment's blob holds its bytes ({short_segments[:3]})",
                       not short_segments)
        blocks = [(b, r, blob_size(b)) for b, r in db.execute("SELECT blob, received FROM blocks")
                  if blob_size(b) != r]
        suite.check(f"index: every block's blob is exactly its acknowledged length ({blocks[:3]})", not blocks)
        parts = [(b, s, blob_size(b)) for b, s in db.execute("SELECT blob, size FROM parts") if blob_size(b) != s]
        suite.check(f"index: every part's blob is exactly the part's size ({parts[:3]})", not parts)
        referenced = {r[0] for r in db.execute("SELECT blob FROM segments UNION SELECT blob FROM blocks "
                                               "UNION SELECT blob FROM parts")}
        on_disk = set(rows)
        for shard in os.listdir(os.path.join(data_dir, "blobs")):
            if os.path.isdir(os.path.join(data_dir, "blobs", shard)):
                on_disk.update(os.listdir(os.path.join(data_dir, "blobs", shard)))
        orphans = on_disk - referenced
        suite.check(f"no orphan blob left by a failed write ({len(orphans)} of {len(on_disk)} files and rows)",
                    not orphans)
    finally:
        db.close()
