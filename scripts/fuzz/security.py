"""The fuzzer's setup (valid ctx, upload ids, record ids from the live servers) and its live
security checks: refused tokens on every upload path, forged ctx, forged and replayed callbacks,
the whole chain, cross-client isolation. Credentials come from the official SDK (harness.wire)."""
import json
import time

import harness as h
import rawhttp


def setup(up, biz, c):
    """Valid material for the generators; returns how much of it was obtained."""
    auth = [("Authorization", "UpToken " + h.upload_token())]
    for i in range(4):
        status, body = rawhttp.simple(up, "POST", "/mkblk/4", auth, bytes([65 + i]) * 4)
        if status == 200:
            c.ctx.append(json.loads(body)["ctx"])
        status, body = rawhttp.simple(up, "POST", "/mkblk/8", auth, b"open")
        if status == 200:
            c.open_ctx.append(json.loads(body)["ctx"])
        enc = h.b64(f"demo/v2-{i}")
        status, body = rawhttp.simple(up, "POST", f"/buckets/demo/objects/{enc}/uploads", auth)
        if status == 200:
            uid = json.loads(body)["uploadId"]
            c.upload_ids.append((enc, uid))
            status, body = rawhttp.simple(up, "PUT", f"/buckets/demo/objects/{enc}/uploads/{uid}/1",
                                          auth + [("Content-Type", "application/octet-stream")], b"part")
            if status == 200:
                c.part_etags.append(json.loads(body)["etag"])
    body = b"bucket=demo&key=demo%2Fsetup&hash=Fsetup&fsize=4&clientId=demo&x%3Aapp=v"
    status, reply = rawhttp.simple(biz, "POST", "/v1/callback", [
        ("Authorization", h.qbox_authorization("/v1/callback", body, h.FORM)), ("Content-Type", h.FORM)], body)
    if status == 200:
        c.record_ids.append(json.loads(reply)["id"])
    return {"ctx": len(c.ctx), "open_ctx": len(c.open_ctx), "upload_ids": len(c.upload_ids), "record_ids": len(c.record_ids)}


class Checks:
    def __init__(self):
        self.results = []

    def check(self, name, ok, detail=""):
        self.results.append({"check": name, "ok": bool(ok), "detail": detail})


def _count_records(biz, api_key, key):
    status, body = rawhttp.simple(biz, "GET", "/v1/uploads?limit=1000", [("Authorization", "Bearer " + api_key)])
    if status != 200:
        return -1
    return sum(1 for item in json.loads(body)["items"] if item.get("key") == key)


def _callback_counters(biz):
    """biz-server's accepted and duplicate callback counters (what it was delivered)."""
    status, body = rawhttp.simple(biz, "GET", "/metrics")
    counts = {"accepted": None, "duplicate": None}
    for line in body.decode(errors="replace").splitlines() if status == 200 else []:
        for name in counts:
            if line.startswith(f"upgate_biz_callbacks_{name}_total "):
                counts[name] = float(line.split()[1])
    return counts


def upload_checks(up, checks):
    """Refused tokens on every upload path, wrong scope, and a forged ctx next to a real one."""
    def form(token, k="demo/other"):
        body, ctype = h.form_body([("token", token), ("key", k)], b"abcd", filename="f")
        return rawhttp.simple(up, "POST", "/", [("Content-Type", ctype)], body)[0]

    tok = h.upload_token()
    status, body = rawhttp.simple(up, "POST", "/mkblk/4", [("Authorization", "UpToken " + tok)], b"abcd")
    ctx = json.loads(body)["ctx"] if status == 200 else None
    key = h.b64("demo/other")

    def v1(token):
        return [rawhttp.simple(up, "POST", "/mkblk/4", [("Authorization", "UpToken " + token)], b"abcd")[0],
                rawhttp.simple(up, "POST", f"/mkfile/4/key/{key}", [("Authorization", "UpToken " + token)],
                               (ctx or "x").encode())[0],
                rawhttp.simple(up, "POST", f"/put/4/key/{key}", [("Authorization", "UpToken " + token)], b"abcd")[0]]

    def v2(token):
        return rawhttp.simple(up, "POST", f"/buckets/demo/objects/{key}/uploads", [("Authorization", "UpToken " + token)])[0]

    ak, sign, _ = h.upload_token().split(":")
    bad_tokens = {
        "expired": h.upload_token(lifetime=-10),
        "tampered policy": f"{ak}:{sign}:" + h.b64(json.dumps({"scope": "demo", "deadline": int(time.time()) + 9999999})),
        "foreign AK": h.upload_token(ak="foreign-ak", sk="foreign-sk"),
        "right AK, wrong SK": h.upload_token(sk="not-the-secret"),
    }
    for name, t in bad_tokens.items():
        statuses = [form(t)] + v1(t) + [v2(t)]
        checks.check(f"up-server: {name} token refused on form, mkblk, mkfile, put, v2 init (401)",
                     all(s == 401 for s in statuses), f"statuses {statuses}")
    scoped = h.upload_token("demo/allowed")
    statuses = [form(scoped)] + v1(scoped)[1:] + [v2(scoped)]
    checks.check("up-server: wrong-scope token refused on form, mkfile, put, v2 init (403)",
                 all(s == 403 for s in statuses), f"statuses {statuses}")
    # The probe means something only with a real ctx to forge from: mkblk of 8 bytes gives an
    # open block (offset 4); the forged ctx (its signature changed) must get 701 where the real
    # one, right after, gets 200.
    status, body = rawhttp.simple(up, "POST", "/mkblk/8", [("Authorization", "UpToken " + tok)], b"abcd")
    real = json.loads(body)["ctx"] if status == 200 else None
    if real is None:
        checks.check("up-server: forged ctx refused on bput and mkfile (701)", False,
                     f"no real ctx obtained to forge from (mkblk answered {status})")
        return
    forged = real[:-4] + ("AAAA" if not real.endswith("AAAA") else "BBBB")
    statuses = [rawhttp.simple(up, "POST", f"/bput/{forged}/4", [("Authorization", "UpToken " + tok)], b"efgh")[0],
                rawhttp.simple(up, "POST", f"/mkfile/8/key/{key}", [("Authorization", "UpToken " + tok)],
                               forged.encode())[0],
                rawhttp.simple(up, "POST", f"/bput/{real}/4", [("Authorization", "UpToken " + tok)], b"efgh")[0]]
    checks.check("up-server: forged ctx refused on bput and mkfile (701), the real ctx it came from accepted (200)",
                 statuses == [701, 701, 200], f"statuses {statuses} (forged bput, forged mkfile, real bput)")


def callback_checks(biz, biz_host, checks):
    """Replayed, forged, foreign, tampered, unsigned, stale and fresh callbacks; returns a record id."""
    now = int(time.time())
    body = f"bucket=demo&key=demo%2Fsec-{now}&hash=Fsec{now}&fsize=4&clientId=demo".encode()
    good = h.qbox_authorization("/v1/callback", body, h.FORM)

    def callback(auth, b=body, extra=()):
        return rawhttp.simple(biz, "POST", "/v1/callback", [("Authorization", auth), ("Content-Type", h.FORM)]
                              + list(extra), b, host=biz_host)

    s1, r1 = callback(good)
    s2, r2 = callback(good)
    rows = _count_records(biz, h.API_KEY, f"demo/sec-{now}")
    checks.check("biz-server: replayed callback answers the same record, no second row",
                 s1 == 200 and s2 == 200 and r1 == r2 and rows == 1,
                 f"statuses {s1},{s2}, same reply {r1 == r2}, rows {rows}")
    statuses = [callback(h.qbox_authorization("/v1/callback", body, h.FORM, sk="forged"))[0],
                callback(h.qbox_authorization("/v1/callback", body, h.FORM, ak="foreign-ak"))[0],
                callback(good, body + b"&x%3Aevil=1")[0], callback("")[0]]
    checks.check("biz-server: forged, foreign-AK, tampered-body and unsigned callbacks refused (401)",
                 all(s == 401 for s in statuses), f"statuses {statuses}")
    stale = "20200101T000000Z"
    s = callback(h.qiniu_authorization("POST", "/v1/callback", biz_host, h.FORM, body, [("X-Qiniu-Date", stale)]),
                 extra=[("X-Qiniu-Date", stale)])[0]
    fresh = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    s_fresh = callback(h.qiniu_authorization("POST", "/v1/callback", biz_host, h.FORM, body, [("X-Qiniu-Date", fresh)]),
                       extra=[("X-Qiniu-Date", fresh)])[0]
    checks.check("biz-server: stale signed-date callback refused (401), fresh one accepted", s == 401 and s_fresh == 200,
                 f"stale {s}, fresh {s_fresh}")
    return json.loads(r1)["id"] if s1 == 200 else "none"


def chain_check(up, biz, checks):
    """Token from biz-server, form upload, signed callback up-server -> biz-server, reply relayed
    (so every secret has passed through both servers' logs before the grep): one record, and one
    delivery by biz-server's counters (rows alone would hide a second one)."""
    chain_key = f"demo/chain-{int(time.time())}"
    before = _callback_counters(biz)
    s_tok, tok_body = rawhttp.simple(biz, "POST", "/v1/uptoken", [("Authorization", "Bearer " + h.API_KEY),
                                     ("Content-Type", "application/json")],
                                     json.dumps({"key": chain_key, "vars": {"x:color": "red"}}).encode())
    chain_token = json.loads(tok_body)["uptoken"] if s_tok == 200 else "none"
    body, ctype = h.form_body([("token", chain_token), ("key", chain_key)], b"abcd", filename="f")
    s_up = rawhttp.simple(up, "POST", "/", [("Content-Type", ctype)], body)[0]
    rows = _count_records(biz, h.API_KEY, chain_key)
    after = _callback_counters(biz)
    delta = {k: (after[k] or 0) - (before[k] or 0) for k in after}
    checks.check("full chain: biz token, form upload, callback delivered and recorded once",
                 s_tok == 200 and s_up == 200 and rows == 1 and delta == {"accepted": 1, "duplicate": 0},
                 f"uptoken {s_tok}, upload {s_up}, rows {rows}, callbacks counted {delta}")


def isolation_check(biz, other_api_key, record_id, checks):
    s_own = rawhttp.simple(biz, "GET", f"/v1/uploads/{record_id}", [("Authorization", "Bearer " + h.API_KEY)])[0]
    s_other = rawhttp.simple(biz, "GET", f"/v1/uploads/{record_id}", [("Authorization", "Bearer " + other_api_key)])[0]
    s_list, listing = rawhttp.simple(biz, "GET", "/v1/uploads?limit=1000", [("Authorization", "Bearer " + other_api_key)])
    leaked = s_list != 200 or any(item.get("clientId") != "other" for item in json.loads(listing).get("items", []))
    checks.check("biz-server: another client's API key cannot read (404) or list a client's upload",
                 s_own == 200 and s_other == 404 and not leaked,
                 f"own {s_own}, other {s_other}, list {s_list}, leaked {leaked}")


def security_checks(up, biz, biz_host, other_api_key):
    checks = Checks()
    upload_checks(up, checks)
    record_id = callback_checks(biz, biz_host, checks)
    chain_check(up, biz, checks)
    isolation_check(biz, other_api_key, record_id, checks)
    return checks.results

