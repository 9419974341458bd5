"""nginx on loopback in front of the servers, from the production example Config/nginx-upgate.conf.

    python -m harness.nginx main WORK SITE      prints nginx.conf for a site file (scripts/production/check)

`main_config` is the one nginx.conf wrapper every script uses (no daemon, logs and temp files in a
work directory); `plain_site` turns the production example into plain HTTP on loopback ports with
several servers per upstream (round robin, no stickiness: nginx's default), keeping every proxy
setting of the example as it is.
"""
import os
import re
import subprocess
import sys

from .processes import ROOT, track

EXAMPLE = os.path.join(ROOT, "Config", "nginx-upgate.conf")


def main_config(work, site, single=False, connections=1024):
    """nginx.conf text: no daemon, one worker (`single`: no master either, one process that a
    SIGKILL stops whole), pid, logs and temp paths in work/nginx (made here), the http context
    including `site`, `connections` per worker."""
    d = os.path.join(work, "nginx")
    os.makedirs(d, exist_ok=True)
    temps = "\n".join(f"    {name}_temp_path {d}/{name};" for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    return (f"daemon off;\n{'master_process off;' if single else 'worker_processes 1;'}\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;\n"
            f"events {{ worker_connections {connections}; }}\nhttp {{\n    access_log {d}/access.log;\n{temps}\n"
            f"    include {site};\n}}\n")


def plain_site(upstreams, listens, example=EXAMPLE):
    """The example's text with `upstream NAME {...}` listing `upstreams[NAME]` (ports on 127.0.0.1),
    the port-80 redirect server dropped, and each TLS server listening on plain HTTP at
    127.0.0.1:`listens[server_name]` (certificate lines dropped)."""
    with open(example, encoding="utf-8") as f:
        text = f.read()
    for name, ports in upstreams.items():
        servers = " ".join(f"server 127.0.0.1:{p};" for p in ports)
        text, n = re.subn(rf"upstream {name}\s*\{{[^}}]*\}}", f"upstream {name} {{ {servers} keepalive 32; }}", text)
        assert n == 1, f"no upstream {name} in {example}"
    text = re.sub(r"server \{\s*listen 80;.*?\n\}\n", "", text, count=1, flags=re.S)
    text = "\n".join(line for line in text.splitlines()
                     if not re.match(r"\s*(listen \[::\]|ssl_)", line)) + "\n"
    for server_name, port in listens.items():
        text, n = re.subn(rf"listen 443 ssl http2;([^\n]*)(\n\s*server_name {re.escape(server_name)};)",
                          rf"listen 127.0.0.1:{port};\2", text)
        assert n == 1, f"no TLS server {server_name} in {example}"
    return text


def start(work, site_text):
    """Writes work/upgate-site.conf and work/nginx.conf and starts nginx as one process (no master:
    a SIGKILL by pid on exit leaves no worker behind), tracked by pid. Returns the Popen."""
    site = os.path.join(work, "upgate-site.conf")
    with open(site, "w", encoding="utf-8") as f:
        f.write(site_text)
    conf = os.path.join(work, "nginx.conf")
    with open(conf, "w", encoding="utf-8") as f:
        f.write(main_config(work, site, single=True, connections=4096))  # load holds 2 x 500 at once
    out = open(os.path.join(work, "nginx", "stdout.log"), "ab")
    process = track(subprocess.Popen(["nginx", "-p", os.path.join(work, "nginx"), "-c", conf], stdout=out,
                                     stderr=out, cwd=work))
    return process


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "main":
        sys.stdout.write(main_config(sys.argv[2], sys.argv[3]))
    else:
        sys.exit("usage: python -m harness.nginx main WORK SITE")
