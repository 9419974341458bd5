"""load: N concurrent small uploads through the whole chain while wrk hammers biz-server's token
endpoint (issue 5, suite 7).

biz-server and up-server run on loopback (release build unless --bin). biz-server's rate limit is
lifted in its temp config (the demo client's 10/s would make wrk and the wave measure 429s).
up-server keeps the deployed callback timeout (5 s) with short outbox retry delays.

Each wave: N threads (one per upload, so all N are in flight at once) each
  1. fetch their own token from biz-server `POST /v1/uptoken` (API key dev-api-key, the key,
     fsize and a traceId of their own), all released together by a barrier;
  2. wait for every token of the wave (a second barrier), then upload 4–64 KiB of random bytes,
     alternately as a form upload (`POST /` multipart, with crc32) or v1 (`mkblk` with the first
     half + `bput` with the rest, then `mkfile`), on a fresh keep-alive connection;
  3. up-server stores the object, calls biz-server back (signed), biz-server records it and its
     answer (the record) is relayed to the client: the reply must be that record (id, key, hash,
     traceId, clientId demo).
wrk (-t2, --wrk-connections keep-alive, scripts/load/uptoken.lua) runs against /v1/uptoken from
1 s before the first wave until every wave is done and at least --wrk-seconds have passed; the
waves start evenly spread over that time, so callbacks arrive all through it while biz-server is
under wrk. `--wrk-connections 0` runs the waves without wrk (for comparison).

Checks: N connections held open at once to each server (wrk's on top) all answer /healthz;
every token 200; every upload 200 with its record relayed (no refused/reset connection,
no 579); biz-server lists exactly one record per upload (none twice, none extra) with the right
hash (the official SDK's etag of the bytes sent); every callback delivered once: biz-server's
counters (which, unlike its rows, are not deduplicated) show N accepted callbacks and no
duplicate; up-server made no failed
callback attempt and its outbox has nothing pending or failed; wrk got no non-2xx answer other
than 429 and no connect error. Prints latency percentiles (token fetch, upload end to end incl.
the callback; each server's own handling time per route from its access log), throughput, wrk's
req/s, latency and statuses, and the CPU seconds of each process; then one summary line. Exit 1
on any failed check. Every wait is bounded (--timeout per request, barriers, joins, wrk).
"""
import os
import random
import resource
import signal
import subprocess
import sys
import time

import harness as h
from harness.cluster import Cluster
from figures import log_durations, parse_wrk, percentiles, raise_nofile
from wave_uploads import Upload, hold_connections, run_wave

SUITE = "load"
HERE = os.path.dirname(os.path.abspath(__file__))


class Run:
    """The servers, wrk and the waves of one load run."""

    def __init__(self, suite, bins, n, waves, wrk_min, instances=0, work=None):
        self.suite, self.args, self.n, self.waves, self.wrk_min = suite, suite.args, n, waves, wrk_min
        work = work or suite.work
        self.bins, self.cluster = bins, None
        if instances:  # nginx over `instances` of each on PostgreSQL + SeaweedFS: the entry points are nginx's
            def limits(config):
                config["rateLimit"] = {"tokensPerSecond": 10**9, "burst": 10**9}
            self.cluster = Cluster(bins, work, instances, instances, biz_change=limits).start()
            self.up, self.biz = Entry(self.cluster.up_port), Entry(self.cluster.biz_port)
            self.ups, self.bizs = self.cluster.ups, self.cluster.bizs
        else:
            self.up = h.Server.up(bins, work, config=h.up_config(work, retry_base=1, retry_max=2, timeout=5)).start()
            self.biz = h.Server.biz(bins, work, self.up.url, config=h.biz_config(work, 10**9, 10**9)).start()
            self.ups, self.bizs = [self.up], [self.biz]
        rnd = random.Random(self.args.seed)
        self.all_waves = [[Upload(w, i, self.args.seed, rnd) for i in range(n)] for w in range(waves)]
        self.use_wrk = self.args.wrk_connections > 0
        self.wrk, self.wrk_cpu, self.wave_figures = None, None, []

    def start_wrk(self):
        self.wrk_out = open(os.path.join(self.suite.work, "wrk.txt"), "w+")
        if not self.use_wrk:
            return
        env = dict(h.CLEAN_ENV, LOAD_WRK_API_KEY=h.API_KEY)
        self.wrk = h.track(subprocess.Popen(
            ["wrk", "-t2", f"-c{self.args.wrk_connections}", "-d3600s", "--timeout", "10s",
             "-s", os.path.join(HERE, "uptoken.lua"), self.biz.url + "/v1/uptoken"],
            stdout=self.wrk_out, stderr=subprocess.STDOUT, env=env))
        self.wrk_t0 = time.monotonic()
        time.sleep(1)  # biz-server under wrk before the first token of the wave
        if self.wrk.poll() is not None:
            raise RuntimeError(f"wrk exited early ({self.wrk.returncode})")

    def check_capacity(self):
        """N connections held to each server at once, while wrk holds its own to biz-server."""
        n = self.n
        held = {name: hold_connections(server.port, n) for name, server in (("up-server", self.up), ("biz-server", self.biz))}
        self.suite.check(f"{n} connections held open at once (wrk's on top), each answered: "
                         + ", ".join(f"{k} {v}/{n}" for k, v in held.items()), all(v == n for v in held.values()))

    def run_waves(self):
        """The waves, spread over wrk's minimum time so callbacks arrive all through it."""
        t_waves = time.monotonic()
        for w, uploads in enumerate(self.all_waves):
            while self.use_wrk and time.monotonic() < t_waves + w * self.wrk_min / self.waves:
                time.sleep(0.05)
            seconds, peak, hung = run_wave(w, uploads, self.biz, self.up, self.args)
            ok = sum(1 for u in uploads if not u.error)
            self.wave_figures.append((seconds, peak))
            self.suite.log(f"wave {w + 1}/{self.waves}: {ok}/{self.n} ok, uploads took {seconds:.2f} s "
                           f"({self.n / seconds:.0f} uploads/s), peak {peak} in flight, {hung} threads hung")

    def stop_wrk(self):
        """wrk reports on SIGINT, after at least --wrk-seconds; returns its parsed figures."""
        if self.use_wrk:
            while time.monotonic() - self.wrk_t0 < self.wrk_min + 1:
                time.sleep(0.1)
            self.wrk_cpu = h.cpu_seconds(self.wrk.pid)
            self.wrk.send_signal(signal.SIGINT)
            try:
                self.wrk.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.wrk.kill()
                self.wrk.wait()
        self.wrk_out.seek(0)
        text = self.wrk_out.read()
        self.wrk_out.close()
        figures = parse_wrk(text)
        if self.use_wrk and "requests" not in figures:
            raise RuntimeError("could not parse wrk's output:\n" + text[-2000:])
        return figures

    def collect(self):
        """What the servers hold and counted, then both stopped; CPU seconds of every process."""
        deadline, pending = time.time() + 30, None  # every callback was synchronous; bounded wait anyway
        while time.time() < deadline:
            pending = h.outbox(self.up.url, "pending")
            if pending is not None and not h.outbox_entries(pending):
                break
            time.sleep(0.25)
        # Each instance counts its own: summed over the instances (one each outside --cluster).
        m = {name: sum(h.metric(s.url, f"upgate_{name}_total") for s in servers) for name, servers in (
            ("biz_callbacks_accepted", self.bizs), ("biz_callbacks_duplicate", self.bizs),
            ("biz_callbacks_rejected", self.bizs), ("up_callback_attempts", self.ups),
            ("up_callback_failures", self.ups))}
        state = {"outbox_idle": h.outbox_idle(self.up.url), "records": h.biz_records(self.biz.url) or [],
                 "metrics": m, "cpu": {"up-server": sum(h.cpu_seconds(s.process.pid) or 0 for s in self.ups),
                                       "biz-server": sum(h.cpu_seconds(s.process.pid) or 0 for s in self.bizs)},
                 "switches": {"up-server": sum(h.context_switches(s.process.pid) or 0 for s in self.ups),
                              "biz-server": sum(h.context_switches(s.process.pid) or 0 for s in self.bizs)}}
        if self.cluster:
            state["cpu"]["nginx"] = h.cpu_seconds(self.cluster.nginx.pid)
            state["cpu"]["postgres"] = h.postgres_cpu_seconds(self.cluster.pg_dir)
            self.cluster.stop()
        else:
            self.up.stop()
            self.biz.stop()
        usage = resource.getrusage(resource.RUSAGE_SELF)
        state["cpu"]["client"] = usage.ru_utime + usage.ru_stime
        state["cpu"]["wrk"] = self.wrk_cpu
        state["biz_routes"], state["up_routes"] = {}, {}
        for key, servers in (("biz_routes", self.bizs), ("up_routes", self.ups)):
            for server in servers:
                for route, values in log_durations(server.log_path).items():
                    state[key].setdefault(route, []).extend(values)
        return state


class Entry:
    """nginx's address as the waves see a server (they use .port and .url)."""

    def __init__(self, port):
        self.port, self.url = port, f"http://127.0.0.1:{port}"


class Prefixed:
    """The suite, its checks named after the run they belong to (--cluster runs two)."""

    def __init__(self, suite, prefix):
        self._suite, self._prefix = suite, prefix

    def check(self, name, ok):
        return self._suite.check(f"{self._prefix}: {name}", ok)

    def __getattr__(self, name):
        return getattr(self._suite, name)


def report(run, state, figures):
    """The figures: latencies, throughput, per-route handling time, wrk, CPU."""
    uploads = [u for wave in run.all_waves for u in wave]
    form = [u for u in uploads if u.method == "form"]
    v1 = [u for u in uploads if u.method == "v1"]
    nbytes, n, bins = sum(u.size for u in uploads), run.n, run.bins
    upload_seconds = sum(s for s, _ in run.wave_figures)
    say = lambda text: print(text, flush=True)  # noqa: E731

    def spread(us, what):
        return percentiles([getattr(u, what) for u in us if getattr(u, what) is not None])
    say(f"load: {run.waves} wave(s) x {n} uploads ({len(form)} form, {len(v1)} v1 mkblk+bput+mkfile), 4-64 KiB, "
        f"{nbytes / 2**20:.1f} MiB; all {n} of a wave in flight at once (peak {max(p for _, p in run.wave_figures)}); "
        f"{'release' if '/release' in bins else 'debug' if '/debug' in bins else bins} binaries, seed {run.args.seed}")
    say(f"  token fetch           {spread(uploads, 'token_s')}   ({n} at once per wave)")
    say(f"  upload end to end     {spread(uploads, 'upload_s')}   (incl. callback; form {spread(form, 'upload_s')};"
        f" v1 {spread(v1, 'upload_s')})")
    say(f"  throughput            {len(uploads) / upload_seconds:.0f} uploads/s, {nbytes / 2**20 / upload_seconds:.1f} "
        f"MiB/s (upload phase of each wave: {', '.join(f'{s:.2f} s' for s, _ in run.wave_figures)})")
    biz_routes, up_routes = state["biz_routes"], state["up_routes"]
    say(f"  biz-server handling   /v1/callback {percentiles(biz_routes.get('/v1/callback', []))};"
        f" /v1/uptoken {percentiles(biz_routes.get('/v1/uptoken', []))}   (access log duration_ms)")
    say("  up-server handling    " + "; ".join(f"{'form' if r == '/' else r} {percentiles(up_routes[r])}"
                                          for r in ("/", "/mkblk", "/bput", "/mkfile") if r in up_routes))
    if run.use_wrk:
        say(f"  wrk /v1/uptoken       {wrk_rps(figures):.0f} req/s over {figures.get('seconds', 0):.1f} s, -t2 "
            f"-c{run.args.wrk_connections}; p50 {figures.get('p50', 0):.2f} / p90 {figures.get('p90', 0):.2f} / "
            f"p99 {figures.get('p99', 0):.2f} / max {figures.get('max', 0):.2f} ms; statuses "
            f"{dict(sorted(figures['status'].items()))}; socket errors {figures.get('errors', {})}")
    say("  CPU seconds           " + ", ".join(f"{k} {v:.1f}" for k, v in state["cpu"].items() if v is not None)
        + f" ({os.cpu_count()} cores)")
    if uploads:
        say("  context switches      " + ", ".join(f"{k} {v / len(uploads):.1f}" for k, v in state["switches"].items())
            + " per upload (threads alive at the end, whole run: start-up and any wrk load included)")


def wrk_rps(figures):
    return figures["requests"] / figures["seconds"] if figures.get("seconds") else 0


def check_run(run, state, figures):
    """Every token and upload, the records, what was delivered (biz-server's counters), the outbox, wrk."""
    suite = run.suite
    uploads = [u for wave in run.all_waves for u in wave]
    total, by_key, records, m = len(uploads), {u.key: u for u in uploads}, state["records"], state["metrics"]
    counts = {}
    for r in records:
        counts[r["key"]] = counts.get(r["key"], 0) + 1
    missing = [k for k in by_key if k not in counts]
    extra = [k for k in counts if k not in by_key]
    ids = {(r["id"], r["key"]) for r in records}
    failures = [u for u in uploads if u.error]
    kinds = {}
    for u in failures:
        kinds[u.error.split(" b'")[0][:60]] = kinds.get(u.error.split(" b'")[0][:60], 0) + 1
    if failures:
        print(f"  failures: {kinds}", flush=True)
        for u in failures[:5]:
            print(f"    {u.key} {u.method}: {u.error}", flush=True)
    suite.check(f"every token fetch answered 200 ({sum(1 for u in uploads if u.token_status != 200)} not)",
                all(u.token_status == 200 for u in uploads))
    suite.check(f"every upload answered 200 with its callback record relayed ({len(failures)} failed: {kinds})",
                not failures)
    got579 = sum(1 for u in uploads if u.status == 579)
    suite.check(f"no upload got 579 (callback failed or timed out) ({got579})", got579 == 0)
    suite.check(f"biz-server has exactly {total} records for the run ({len(missing)} missing, {len(extra)} "
                f"unexpected, {len(records)} listed)", not missing and not extra and len(records) == total)
    suite.check(f"no upload recorded twice ({sum(1 for c in counts.values() if c > 1)})",
                all(c == 1 for c in counts.values()))
    wrong = [r["key"] for r in records if r["key"] in by_key and r["hash"] != by_key[r["key"]].etag]
    suite.check(f"every record carries qiniu.etag of the uploaded bytes ({len(wrong)} wrong)", not wrong)
    suite.check(f"every relayed reply is the listed record "
                f"({sum(1 for u in uploads if u.reply and (u.reply.get('id'), u.key) not in ids)} not)",
                all((u.reply.get("id"), u.key) in ids for u in uploads if u.reply))
    # Delivered, not only recorded: biz-server deduplicates rows, its duplicate counter does not.
    accepted, duplicate, rejected = (m["biz_callbacks_accepted"], m["biz_callbacks_duplicate"],
                                     m["biz_callbacks_rejected"])
    suite.check(f"each callback delivered once: biz-server counted {accepted} accepted, {duplicate} duplicate, "
                f"{rejected} rejected callbacks for {total} uploads", accepted == total and duplicate == 0 and rejected == 0)
    suite.check(f"up-server: {m['up_callback_attempts']} callback attempts, {m['up_callback_failures']} failed",
                m["up_callback_attempts"] == total and m["up_callback_failures"] == 0)
    suite.check("up-server outbox: nothing pending or failed", state["outbox_idle"])
    if run.use_wrk:
        non2xx = {s: c for s, c in figures["status"].items() if not 200 <= s < 300 and s != 429}
        errors = figures.get("errors", {})
        suite.check(f"wrk: no non-2xx answer but 429 ({non2xx}), no connect error ({errors.get('connect')})",
                    not non2xx and errors.get("connect", 1) == 0 and figures["requests"] > 0)
    p = sorted(u.upload_s for u in uploads if u.upload_s is not None)
    if not p:
        return f"0/{total} uploads"
    return (f"{total - len(failures)}/{total} uploads recorded once ({run.waves}x{run.n} at once), "
            f"upload p99 {p[min(len(p) - 1, int(0.99 * len(p)))] * 1000:.0f} ms, "
            f"{total / sum(s for s, _ in run.wave_figures):.0f} uploads/s"
            + (f"; wrk {wrk_rps(figures):.0f} req/s p99 {figures.get('p99', 0):.1f} ms" if run.use_wrk else "; no wrk"))


def drive(run):
    """One run from wrk's start to its checks: (what collect() found, wrk's figures, the summary's
    extra text)."""
    run.start_wrk()
    run.check_capacity()
    run.run_waves()
    figures = run.stop_wrk()
    state = run.collect()
    report(run, state, figures)
    return state, figures, check_run(run, state, figures)


def cluster_runs(suite, bins, n, waves, wrk_min):
    """The same load through nginx over 1 and then 2 instances of each (--instances), one after the
    other on the same machine; the figures side by side, per core as well."""
    rows = []
    for k in suite.args.instances or [1, 2]:
        run = None
        with suite:
            work = os.path.join(suite.work, f"x{k}")
            os.makedirs(work)
            run = Run(Prefixed(suite, f"{k} up + {k} biz"), bins, n, waves, wrk_min, instances=k, work=work)
            suite.log(f"{k} up-server(s) + {k} biz-server(s) behind nginx up {run.up.url}, biz {run.biz.url}")
            state, figures, _ = drive(run)
            uploads = [u for wave in run.all_waves for u in wave]
            p = sorted(u.upload_s for u in uploads if u.upload_s is not None) or [0]
            server_cpu = sum(v or 0 for name, v in state["cpu"].items() if name not in ("client", "wrk"))
            rows.append((k, len(uploads) / sum(sec for sec, _ in run.wave_figures), p[(len(p) - 1) // 2],
                         p[min(len(p) - 1, int(0.99 * len(p)))], wrk_rps(figures) if run.use_wrk else 0,
                         server_cpu, len(uploads)))
        if run and run.wrk is not None and run.wrk.poll() is None:
            run.wrk.kill()
    cores = os.cpu_count()
    kind = "release" if "/release" in bins else "debug" if "/debug" in bins else bins
    print(f"load --cluster: the same load through nginx, {kind} binaries, {cores} cores (every process on "
          f"them: no speed-up is expected from a second instance here, only the cost of spreading)", flush=True)
    print(f"  {'instances':>10} {'uploads/s':>10} {'per core':>9} {'p50 ms':>7} {'p99 ms':>7} {'wrk req/s':>10} "
          f"{'per core':>9} {'server CPU s':>13}", flush=True)
    for k, ups, p50, p99, rps, cpu, _ in rows:
        print(f"  {f'{k}+{k}':>10} {ups:>10.0f} {ups / cores:>9.0f} {p50 * 1000:>7.0f} {p99 * 1000:>7.0f} {rps:>10.0f} "
              f"{rps / cores:>9.0f} {cpu:>13.1f}", flush=True)
    return suite.finish("; ".join(f"{k}+{k}: {ups:.0f} uploads/s ({ups / cores:.0f}/core), wrk {rps:.0f} req/s "
                                  f"({rps / cores:.0f}/core)" for k, ups, _, _, rps, _, _ in rows))


def parse_args():
    ap = h.suite_arguments(__doc__, "1 wave of 100 uploads, wrk >= 10 s (default: 3 x 500, >= 30 s)")
    ap.add_argument("--uploads", type=int, help="uploads per wave, all in flight at once")
    ap.add_argument("--waves", type=int)
    ap.add_argument("--wrk-seconds", type=int, help="wrk runs at least this long, and until every wave is done")
    ap.add_argument("--wrk-connections", type=int, default=64)
    ap.add_argument("--timeout", type=float, default=60, help="per HTTP request of the wave (s)")
    ap.add_argument("--cluster", action="store_true",
                    help="through nginx over 1, then 2 up-servers and biz-servers on PostgreSQL + SeaweedFS "
                         "(scripts/cluster's deployment); prints both side by side")
    ap.add_argument("--instances", type=int, nargs="+", help="with --cluster: the instance counts (default: 1 2)")
    return ap.parse_args()


def main():
    args = h.short_or_full(parse_args(), uploads=(100, 500), waves=(1, 3), wrk_seconds=(10, 30))
    n, waves, wrk_min = args.uploads, args.waves, args.wrk_seconds
    nofile = raise_nofile(4 * n + 1024)  # inherited by the servers and wrk
    if nofile < 2 * n + 256:
        print(f"load: ulimit -n is {nofile} (hard limit); {n} uploads at once need about {2 * n + 256}",
              file=sys.stderr)
        return 2
    suite = h.Suite(SUITE, args, "upgate-load-")
    bins = suite.bins
    suite.log(f"seed {args.seed}, {waves} x {n} uploads, wrk -c{args.wrk_connections} >= {wrk_min} s, "
              f"ulimit -n {nofile}, bin {bins}, work {suite.work}")
    extra, run = "", None
    if args.cluster:
        return cluster_runs(suite, bins, n, waves, wrk_min)
    with suite:
        run = Run(suite, bins, n, waves, wrk_min)
        _, _, extra = drive(run)
    if run and run.wrk is not None and run.wrk.poll() is None:
        run.wrk.kill()
    return suite.finish(extra)


if __name__ == "__main__":
    sys.exit(main())
