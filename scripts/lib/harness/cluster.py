"""Upgate past one machine, on loopback: a private PostgreSQL 15 (scripts/lib/postgres.sh), SeaweedFS
as the S3 store (scripts/lib/seaweedfs.sh), N up-servers and M biz-servers on them, and nginx round
robin (no stickiness) from the production example with one address for up and one for biz.

    python -m harness.cluster [--ups N] [--bizs M] [--bin DIR] [--keep] [--ready-file F]
                                              (what scripts/cluster runs; Ctrl-C or TERM stops it)
    c = Cluster(bins, work, ups=2, bizs=2).start()     (the suites: chaos/cluster, load --cluster)

Every up-server has the same contextSecret, publicBaseURL = nginx's up address; every biz-server
hands out that address, its callbacks go to nginx's biz address (publicBaseURL); both kinds have
trustedProxies 127.0.0.1/32 (nginx), so their logs and biz-server's rate limits see the client. Both kinds share one database (their tables do not collide). Every process is stopped
by its pid; PostgreSQL and SeaweedFS also stop when this process dies however it dies (their
watchers see it).
"""
import argparse
import hashlib
import hmac
import json
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
import xml.etree.ElementTree as ET

from ports import free_port, free_ports  # scripts/lib/ports.py

from . import nginx
from .wire import request
from .processes import ROOT, Server, bin_dir, install_cleanup, wait_ready

LIB = os.path.join(ROOT, "scripts", "lib")
PG_BIN = os.environ.get("PG_CLUSTER_BIN", "/usr/lib/postgresql/15/bin")
S3_BUCKET = "upgate"


def _postgres(*command):
    """One scripts/lib/postgres.sh function; its standard output."""
    return subprocess.run(["bash", "-c", f'source "{LIB}/postgres.sh" && "$@"', "postgres.sh", *command],
                          check=True, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                          timeout=90).stdout.strip()


class Cluster:
    """The whole deployment; `up` / `biz` are nginx's addresses, `ups` / `bizs` the instances
    (harness.Server: kill9(), start() again on the same port)."""

    def __init__(self, bins, work, ups=2, bizs=2, up_change=None, biz_change=None):
        self.bins, self.work, self.n_ups, self.n_bizs = bins, work, ups, bizs
        self.up_change, self.biz_change = up_change or (lambda c: None), biz_change or (lambda c: None)
        self.ups, self.bizs = [], []
        self.pg_dir = self.pg_watch = self.weed = self.nginx = None
        self.context_secret = secrets.token_hex(24)

    # ------------------------------------------------------------ start / stop

    def start(self):
        started = time.time()
        self._start_postgres()
        self._start_seaweedfs()
        self.up_port, self.biz_port = free_ports(2)
        self.up, self.biz = f"http://127.0.0.1:{self.up_port}", f"http://127.0.0.1:{self.biz_port}"
        for i in range(self.n_ups):
            self.ups.append(self._server("up-server", i, self._up_config(i)).start(timeout=60))
        for i in range(self.n_bizs):
            self.bizs.append(self._server("biz-server", i, self._biz_config(i)).start(timeout=60))
        site = nginx.plain_site({"upgate_up": [s.port for s in self.ups], "upgate_biz": [s.port for s in self.bizs]},
                                {"up.example.com": self.up_port, "api.example.com": self.biz_port})
        self.nginx = nginx.start(self.work, site)
        wait_ready(self.up + "/healthz", self.nginx, f"nginx (see {self.work}/nginx/error.log)")
        wait_ready(self.biz + "/healthz", self.nginx, f"nginx (see {self.work}/nginx/error.log)")
        self.seconds_to_start = time.time() - started
        return self

    def stop(self):
        """Everything by its pid, the proxy first, the stores last (bounded)."""
        from .processes import stop
        stop(self.nginx, grace=5)
        for s in self.ups + self.bizs:
            s.stop(grace=10)
        if self.weed is not None and self.weed.poll() is None:
            self.weed.send_signal(signal.SIGTERM)
            try:
                self.weed.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.weed.kill()
        if self.pg_watch is not None and self.pg_watch.poll() is None:
            self.pg_watch.stdin.close()  # the watcher stops the postmaster and removes its directory
            try:
                self.pg_watch.wait(timeout=40)
            except subprocess.TimeoutExpired:
                self.pg_watch.kill()

    def _start_postgres(self):
        self.pg_dir = tempfile.mkdtemp(prefix="upgate-cluster-pg-")
        _postgres("pg_cluster_start", self.pg_dir, "max_connections=200")
        self.pg_url = _postgres("pg_cluster_createdb", self.pg_dir, "upgate")
        # Stops the cluster when its standard input closes: at stop(), or when this process dies.
        self.pg_watch = subprocess.Popen(["bash", "-c", f'source "{LIB}/postgres.sh" && pg_cluster_watch "$1"',
                                          "watch", self.pg_dir], stdin=subprocess.PIPE,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                         start_new_session=True)  # a terminal's Ctrl-C must not kill it

    def pg_restart(self):
        """pg_ctl restart -m fast: same port, same data; every server's connections are cut."""
        _postgres("pg_cluster_restart", self.pg_dir)

    def psql(self, sql):
        """Rows of one query (over the cluster's trusted socket), each a list of text fields."""
        port = open(os.path.join(self.pg_dir, "port")).read().strip()
        out = subprocess.run([os.path.join(PG_BIN, "psql"), "-X", "-q", "-At", "-F", "\t", "-v", "ON_ERROR_STOP=1",
                              "-h", self.pg_dir, "-p", port, "-U", "upgate", "-d", "upgate", "-c", sql],
                             check=True, capture_output=True, text=True, timeout=60).stdout
        return [line.split("\t") for line in out.splitlines() if line]

    def _start_seaweedfs(self):
        d = os.path.join(self.work, "seaweedfs")
        os.makedirs(d, exist_ok=True)
        log = open(os.path.join(self.work, "seaweedfs.log"), "ab")
        # `serve` stops weed (by its pid) on TERM or when this process exits.
        self.weed = subprocess.Popen(["bash", os.path.join(LIB, "seaweedfs.sh"), "serve", d, str(os.getpid())],
                                     stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        ready, _, _ = select.select([self.weed.stdout], [], [], 90)
        line = self.weed.stdout.readline().decode() if ready else ""
        fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
        if "endpoint" not in fields:
            raise RuntimeError(f"SeaweedFS did not start (see {self.work}/seaweedfs.log)")
        self.s3 = {"endpoint": fields["endpoint"], "bucket": S3_BUCKET, "region": "us-east-1",
                   "access_key": fields["access_key"], "secret_key": fields["secret_key"], "pid": int(fields["pid"])}
        status = self._s3_request("PUT", "/" + S3_BUCKET)[0]
        if status != 200:
            raise RuntimeError(f"CreateBucket {S3_BUCKET} answered {status}")
        # SeaweedFS's first write after it starts takes about 5 s (4.96 s in 3 of 4 fresh starts on
        # 2026-12-07; a new bucket's first write after that about 0.2 s, later ones 1-2 ms). Paid
        # here, at start-up, instead of by whatever the caller measures first: it was the "stalled
        # run" of the cluster load suite (its first wave's uploads waited 5 s, p99 5-8 s).
        for method, body in (("PUT", b"warm"), ("DELETE", b"")):
            status = self._s3_request(method, f"/{S3_BUCKET}/harness-warm-up", body=body)[0]
            if status not in (200, 204):
                raise RuntimeError(f"{method} of a warm-up object in {S3_BUCKET} answered {status}")

    # ------------------------------------------------------------ the servers

    def _server(self, kind, i, config):
        name = f"{kind}-{i + 1}"
        return Server(name, os.path.join(self.bins, kind), config, free_port(),
                      os.path.join(self.work, name), os.path.join(self.work, name + ".log"))

    def _write(self, name, config):
        path = os.path.join(self.work, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(config, f, indent=2)
        return path

    def _up_config(self, i):
        config = _example("up-server.json")
        config.update(database=self.pg_url, contextSecret=self.context_secret, publicBaseURL=self.up,
                      trustedProxies=["127.0.0.1/32"],
                      blobStore={"type": "s3", "endpoint": self.s3["endpoint"], "region": self.s3["region"],
                                 "bucket": S3_BUCKET, "accessKeyId": self.s3["access_key"],
                                 "secretAccessKey": self.s3["secret_key"]})
        config["callback"] = dict(config.get("callback", {}), timeoutSeconds=5, maxRetries=30,
                                  retryBaseDelaySeconds=1, retryMaxDelaySeconds=2)
        self.up_change(config)
        return self._write(f"up-server-{i + 1}.json", config)

    def _biz_config(self, i):
        config = _example("biz-server.json")
        config.update(database=self.pg_url, publicBaseURL=self.biz, upHosts=[self.up],
                      trustedProxies=["127.0.0.1/32"], rateLimit={"tokensPerSecond": 1000, "burst": 1000})
        self.biz_change(config)
        return self._write(f"biz-server-{i + 1}.json", config)

    # ------------------------------------------------------------ the store as a client sees it

    def _s3_request(self, method, path, query=None, body=b""):
        """(status, answer body) of one AWS Signature V4 request to SeaweedFS (signed here, with hashlib and
        hmac: curl 7.88's --aws-sigv4 does not canonicalise query strings)."""
        query = sorted((query or {}).items())
        encode = lambda v: urllib.parse.quote(v, safe="-_.~")  # noqa: E731 - RFC 3986 unreserved only
        canonical_query = "&".join(f"{encode(k)}={encode(v)}" for k, v in query)
        host = urllib.parse.urlsplit(self.s3["endpoint"]).netloc
        now = time.gmtime()
        stamp, day = time.strftime("%Y%m%dT%H%M%SZ", now), time.strftime("%Y%m%d", now)
        payload = hashlib.sha256(body).hexdigest()
        headers = {"host": host, "x-amz-content-sha256": payload, "x-amz-date": stamp}
        signed = ";".join(sorted(headers))
        canonical = "\n".join([method, urllib.parse.quote(path), canonical_query,
                                "".join(f"{k}:{headers[k]}\n" for k in sorted(headers)), signed, payload])
        scope = f"{day}/{self.s3['region']}/s3/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()])
        key = ("AWS4" + self.s3["secret_key"]).encode()
        for part in (day, self.s3["region"], "s3", "aws4_request"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
        headers["authorization"] = (f"AWS4-HMAC-SHA256 Credential={self.s3['access_key']}/{scope}, "
                                    f"SignedHeaders={signed}, Signature={signature}")
        del headers["host"]
        status, _, answer = request(self.s3["endpoint"], method, path + (f"?{canonical_query}" if query else ""),
                                    body=body, headers=headers, timeout=60)
        return status, answer

    def store_objects(self, prefix="blobs/"):
        """Every object name in the bucket under `prefix` (ListObjectsV2, all pages)."""
        names, token = [], None
        for _ in range(10000):
            query = {"list-type": "2", "prefix": prefix, "max-keys": "1000"}
            if token:
                query["continuation-token"] = token
            status, body = self._s3_request("GET", f"/{S3_BUCKET}", query)
            if status != 200:
                raise RuntimeError(f"ListObjectsV2 answered {status}: {body[:200]!r}")
            root = ET.fromstring(body)
            ns = root.tag.split("}")[0] + "}" if root.tag.startswith("{") else ""
            names += [c.findtext(ns + "Key") for c in root.findall(ns + "Contents")]
            token = root.findtext(ns + "NextContinuationToken")
            if root.findtext(ns + "IsTruncated") != "true" or not token:
                return names
        return names

    def indexed_blobs(self):
        """Blob ids up-server's index names: object segments, blocks, v2 parts."""
        rows = self.psql("SELECT blob FROM segments UNION SELECT blob FROM blocks UNION SELECT blob FROM parts")
        return {r[0] for r in rows}

    def ready(self):
        """What a suite needs, as JSON-able data."""
        return {"up": self.up, "biz": self.biz,
                "ups": [{"url": s.url, "pid": s.process.pid} for s in self.ups],
                "bizs": [{"url": s.url, "pid": s.process.pid} for s in self.bizs],
                "nginx": {"pid": self.nginx.pid}, "postgres": {"url": self.pg_url, "dir": self.pg_dir},
                "s3": {k: v for k, v in self.s3.items()}, "work": self.work}


def _example(name):
    with open(os.path.join(ROOT, "Config", name), encoding="utf-8") as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ups", type=int, default=2)
    ap.add_argument("--bizs", type=int, default=2)
    ap.add_argument("--bin", help="directory of up-server and biz-server (default: the release build)")
    ap.add_argument("--keep", action="store_true", help="keep the configs and logs")
    ap.add_argument("--ready-file", help="write the addresses, pids, PostgreSQL URL and S3 endpoint here (JSON)")
    args = ap.parse_args()
    if args.ups < 1 or args.bizs < 1:
        ap.error("--ups and --bizs need at least 1")
    install_cleanup()
    work = tempfile.mkdtemp(prefix="upgate-cluster-")
    cluster = Cluster(bin_dir(args.bin), work, args.ups, args.bizs)
    stopping = []

    def on_signal(signum, _frame):
        stopping.append(signum)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    status = 0
    try:
        cluster.start()
        if args.ready_file:
            with open(args.ready_file + ".tmp", "w") as f:
                json.dump(cluster.ready(), f, indent=2)
            os.replace(args.ready_file + ".tmp", args.ready_file)
        print(f"cluster: up  {cluster.up}   (nginx round robin over {', '.join(s.url for s in cluster.ups)})\n"
              f"cluster: biz {cluster.biz}   (nginx round robin over {', '.join(s.url for s in cluster.bizs)})\n"
              f"cluster: PostgreSQL {cluster.pg_url}\ncluster: S3 {cluster.s3['endpoint']} bucket {S3_BUCKET}\n"
              f"cluster: work directory {work}; started in {cluster.seconds_to_start:.1f} s\n"
              f"cluster: Ctrl-C (or kill {os.getpid()}) stops everything", file=sys.stderr, flush=True)
        while not stopping:
            dead = [s.name for s in cluster.ups + cluster.bizs if not s.alive()]
            if dead or cluster.nginx.poll() is not None:
                print(f"cluster: FAILED: {', '.join(dead) or 'nginx'} exited (logs in {work})", file=sys.stderr)
                status = 1
                break
            time.sleep(0.5)
    except Exception as error:  # noqa: BLE001 - one line, the logs kept
        print(f"cluster: FAILED: {error}", file=sys.stderr)
        status = 1
    finally:
        cluster.stop()
        if args.ready_file and os.path.exists(args.ready_file):
            os.remove(args.ready_file)
        if args.keep or status:
            print(f"cluster: configs and logs kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("cluster: stopped", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
