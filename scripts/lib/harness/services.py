"""up-server's and biz-server's read endpoints as an outside client sees them: stat, download and
the outbox (management requests, QBox-signed), metrics, biz-server's upload records."""
import json

from .wire import API_KEY, entry, get, qbox_authorization


def _management(up, path, timeout):
    return get(up + path, {"Authorization": qbox_authorization(path)}, timeout=timeout)


def stat(up, key):
    """(status, the stat JSON or None)."""
    status, body = _management(up, "/stat/" + entry(key), timeout=10)
    return status, (json.loads(body) if status == 200 else None)


def download(up, key):
    """(status, the object's bytes)."""
    return _management(up, "/download/" + entry(key), timeout=120)


def outbox(up, state):
    """The /admin/outbox listing of `state` (pending, failed, …), or None if it did not answer 200."""
    status, body = _management(up, f"/admin/outbox?state={state}", timeout=10)
    return json.loads(body) if status == 200 else None


def outbox_entries(listing):
    if isinstance(listing, list):
        return listing
    for name in ("items", "entries", "callbacks", "outbox"):
        if isinstance((listing or {}).get(name), list):
            return listing[name]
    return []


def outbox_idle(up):
    """Whether the outbox answers and has nothing pending or failed."""
    pending, failed = outbox(up, "pending"), outbox(up, "failed")
    return pending is not None and failed is not None and not outbox_entries(pending) and not outbox_entries(failed)


def biz_records(biz, api_key=API_KEY):
    """Every upload record of the API key's client (all pages), or None if biz-server does not answer."""
    items, after = [], None
    for _ in range(1000):
        status, body = get(biz + "/v1/uploads?limit=100" + (f"&after={after}" if after else ""),
                           {"Authorization": "Bearer " + api_key}, timeout=10)
        if status != 200:
            return None
        page = json.loads(body)
        items += page["items"]
        after = page.get("next")
        if not after:
            return items
    return items


def metric(url, name):
    """The sum of every sample of a Prometheus metric at url/metrics (all labels), None if unreachable."""
    status, body = get(url + "/metrics", timeout=10)
    if status != 200:
        return None
    total = 0.0
    for line in body.decode().splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            total += float(line.rsplit(" ", 1)[1])
    return total
