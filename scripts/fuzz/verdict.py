#!/usr/bin/env python3
"""The fuzz run's verdict (scripts/fuzz/run calls it last): the fuzzer's report, the servers' logs
and the driver's after-checks in; the summary line out, exit status 1 on any finding.

    verdict.py --report R --up-log L --biz-log L --crashes N --outside N --leaks N --fuzz-status S
               --st-status S --st-cases N --st-min-cases N --st-server-errors N

A 5xx is judged by what the server logged for its request id (X-Reqid), not by its status alone:
  - any status but 503, 579 and 599 (and 505 to a request line that is not HTTP/1.x) is unexpected;
  - any 5xx whose request logged an error-level line came from an unexpected error;
  - a 599 is one of two rows of up-server's error table, "chunk superseded" (logged at info) or an
    internal error: one whose request did not log the former is the latter.
Every error-level log line fails the run; so does a schemathesis run that did not exit 0 or
generated fewer cases than the minimum, and a slow-loris connection not cut by the server
(one that never connected included).
"""
import argparse
import json
import sys

DOCUMENTED_5XX = {503, 579, 599}


class Log:
    """A server log's error-level lines and the request ids of its errors and superseded chunks."""

    def __init__(self, path):
        self.path, self.errors, self.error_reqids, self.superseded = path, [], set(), set()
        with open(path, errors="replace") as f:
            for line in f:
                try:
                    entry = json.loads(line)
                except ValueError:
                    if '"level":"error"' in line:  # a line cut or mangled, still an error line
                        self.errors.append(line.strip())
                    continue
                if not isinstance(entry, dict):
                    continue
                if entry.get("level") in ("error", "critical"):
                    self.errors.append(line.strip())
                    if entry.get("reqid"):
                        self.error_reqids.add(entry["reqid"])
                elif "superseded" in str(entry.get("msg", "")) and entry.get("reqid"):
                    self.superseded.add(entry["reqid"])


def unexpected_5xx(server, log):
    """The server's 5xx answers that an unexpected error produced (or that no row explains)."""
    bad = []
    for e in server["server_errors"]:
        status, reqid = e["status"], e["reqid"]
        if status == 505 and not e["wrong_505"]:
            why = None
        elif status not in DOCUMENTED_5XX:
            why = "not a documented 5xx"
        elif reqid and reqid in log.error_reqids:
            why = "its request logged an error"
        elif status == 599 and reqid not in log.superseded:
            why = "a 599 that is no superseded chunk: an internal error"
        else:
            why = None
        if why:
            bad.append(dict(e, why=why))
    unjudged = server["server_error_count"] - len(server["server_errors"])
    return bad, unjudged


def main():
    ap = argparse.ArgumentParser()
    for name in ("report", "up-log", "biz-log"):
        ap.add_argument("--" + name, required=True)
    for name in ("crashes", "outside", "leaks", "fuzz-status", "st-status", "st-cases", "st-min-cases",
                 "st-server-errors"):
        ap.add_argument("--" + name, type=int, required=True)
    a = ap.parse_args()
    try:
        with open(a.report) as f:
            report = json.load(f)
    except (OSError, ValueError):
        report = {"servers": [], "security": []}
    servers = report["servers"]
    logs = {"up-server": Log(a.up_log), "biz-server": Log(a.biz_log)}

    crashes = max(a.crashes, sum(1 for s in servers if s["crashed"]))
    hangs = sum(s["hangs"] for s in servers)
    bad5xx, unjudged = [], 0
    for s in servers:
        bad, left = unexpected_5xx(s, logs[s["server"]])
        bad5xx += [dict(b, server=s["server"]) for b in bad]
        unjudged += left
    failed_checks = [c for c in report["security"] if not c["ok"]]
    bypass = sum(s["auth_bypass"] for s in servers)
    if bypass:
        failed_checks.append({"check": f"{bypass} upload requests with a refused-kind token were accepted (2xx)"})
    undocumented = sum(s.get("undocumented", 0) for s in servers)
    if undocumented:
        failed_checks.append({"check": f"{undocumented} JWT or admin requests got an undocumented status"})

    for s in servers:
        for kind in ("hang_samples", "crash_context", "auth_bypass_samples", "undocumented_samples"):
            for sample in s.get(kind, [])[:5]:
                print(f"fuzz: {s['server']} {kind}: {json.dumps(sample)[:900]}", file=sys.stderr)
    for b in bad5xx[:10]:
        print(f"fuzz: {b['server']} unexpected {b['status']} ({b['why']}, reqid {b['reqid']}): "
              f"{json.dumps(b)[:900]}", file=sys.stderr)
    errors = sum(len(log.errors) for log in logs.values())
    for name, log in logs.items():
        for line in log.errors[:5]:
            print(f"fuzz: {name} error line: {line[:500]}", file=sys.stderr)

    print(f"fuzz: security checks: {sum(1 for c in report['security'] if c['ok'])} passed, "
          f"{len(failed_checks)} failed (refused-kind tokens accepted: {bypass}, undocumented statuses: {undocumented}); secrets in logs: {a.leaks}; "
          f"\"level\":\"error\" log lines: {errors}")
    slow = {k: sum(s["outcomes"].get("slowloris-" + k, 0) for s in servers)
            for k in ("attempted", "closed-by-server", "ended", "not-connected")}
    slow_wanted = sum(s.get("slowloris_connections", 0) for s in servers)
    slow_bad = (slow["attempted"] != slow_wanted or slow["closed-by-server"] != slow_wanted
                or slow["ended"] or slow["not-connected"])
    print(f"fuzz: slow-loris connections cut by the server's head deadline: {slow['closed-by-server']} of "
          f"{slow_wanted}, outlived it: {slow['ended']}, never connected: {slow['not-connected']}")
    st_bad = a.st_status != 0 or a.st_cases < a.st_min_cases
    print(f"fuzz: schemathesis: exit {a.st_status}, {a.st_cases} test cases (at least {a.st_min_cases} needed), "
          f"{a.st_server_errors} server errors")
    requests = sum(s["requests"] for s in servers) + a.st_cases
    bad5xx_count = len(bad5xx) + unjudged + a.st_server_errors
    bad = (crashes or hangs or bad5xx_count or a.outside or failed_checks or slow_bad or a.leaks or errors
           or st_bad or a.fuzz_status or not servers)
    print(f"fuzz: {'FAIL' if bad else 'PASS'} {requests} requests, {crashes} crashes, {hangs} hangs, {bad5xx_count} "
          f"unexpected 5xx, {a.outside} files outside data dirs, {errors} error log lines"
          + (f" ({unjudged} 5xx beyond the {len(bad5xx)} judged)" if unjudged else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
