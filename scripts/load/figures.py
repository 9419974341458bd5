"""The load suite's figures (see load.py): latency percentiles, wrk's machine-readable lines
(uptoken.lua), each server's handling time per route from its access log (CPU seconds: harness)."""
import json
import resource

def percentiles(values):
    """'p50 a / p90 b / p99 c / max d ms' of seconds (or '-' when empty)."""
    if not values:
        return "-"
    s = sorted(values)

    def at(p):
        return s[min(len(s) - 1, max(0, int(round(p / 100 * len(s) + 0.5)) - 1))]
    return " / ".join(f"{name} {v * 1000:.0f}" for name, v in
                      (("p50", at(50)), ("p90", at(90)), ("p99", at(99)), ("max", s[-1]))) + " ms"



def parse_wrk(text):
    out = {"status": {}}
    for line in text.splitlines():
        parts = line.split()
        if not parts or parts[0] != "load-wrk":
            continue
        if parts[1] == "requests":
            out["requests"] = int(parts[2])
        elif parts[1] == "duration_us":
            out["seconds"] = int(parts[2]) / 1e6
        elif parts[1] == "errors":
            out["errors"] = {k: int(v) for k, v in (p.split("=") for p in parts[2:])}
        elif parts[1] == "latency_us":
            out[parts[2]] = int(parts[3]) / 1e3  # ms
        elif parts[1] == "status":
            out["status"][int(parts[2])] = int(parts[3])
    return out


def log_durations(path):
    """{route: [seconds]} from the access-log lines (JSON) of a server log; a route is the path's
    first segment ("/mkblk", "/v1/callback" for /v1/...), "/" for the form upload."""
    routes = {}
    try:
        with open(path, "rb") as f:
            for raw in f:
                if b'"msg":"request"' not in raw:
                    continue
                try:
                    line = json.loads(raw)
                    parts = line["path"].split("/")
                    route = "/".join(parts[:3]) if parts[1:2] == ["v1"] else "/" + parts[1]
                    routes.setdefault(route, []).append(float(line["duration_ms"]) / 1000)
                except (ValueError, KeyError, TypeError, IndexError):
                    pass
    except OSError:
        pass
    return routes


def raise_nofile(want):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        soft = min(want, hard) if hard != resource.RLIM_INFINITY else want
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    return soft
