"""The one Python library of scripts/: every suite (chaos, load, fuzz) and benchmark imports it.

    import harness as h        (scripts/lib on PYTHONPATH: scripts/lib/common.sh exports it)

- processes: free ports, servers and other children started and stopped by pid (SIGKILL on exit,
  failure and Ctrl-C included), temp configs, the binaries to test;
- wire: HTTP requests, multipart form bodies, Qiniu signing and etags through the official SDK
  (`qiniu`, the scripts/pyenv venv), the v2 multipart hash computed independently (§7.2);
- services: up-server's management reads (stat, download, outbox) and metrics, biz-server's
  records, as an outside client sees them;
- report: the suite's checks, its summary line, its work directory, skips for scripts/test;
- cluster, nginx (imported by name: `from harness.cluster import Cluster`): the deployment past
  one machine on loopback, and nginx from the production example;
- webhooks (imported by name: `from harness.webhooks import Receiver`): the app's webhook endpoint,
  every delivery verified by `standardwebhooks` (also used by Tests/Conformance/biz_webhooks.py).

Expected values (etags above all) never come from the product's own code: a check that compares
the product with itself cannot fail.
"""
from .processes import (ROOT, CLEAN_ENV, PRODUCTS, Server, bin_dir, biz_config, build_release, context_switches,
                        cpu_seconds, free_port, install_cleanup, kill9, postgres_cpu_seconds, stop, track, up_config,
                        wait_ready, write_config)
from .report import Suite, log, make_file, note_skip, sha1_file, short_or_full, suite_arguments, summary
from .services import biz_records, download, metric, outbox, outbox_entries, outbox_idle, stat
from .wire import (AK, API_KEY, BUCKET, FORM, SK, b64, connect, entry, etag, etag_of_bytes, etag_of_files, form_body, get,
                   qbox_authorization, qiniu_authorization, request, send, token_with_policy, upload_token, v2_hash)
