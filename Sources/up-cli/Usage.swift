/// `up-cli --help`.
let usage = """
    up-cli — the Upgate reference upload client (Qiniu form, resumable v1 and multipart v2).

    USAGE:
      up-cli put FILE [--key K] [--biz URL --api-key K | --token T] [--up-host URL ...]
                 [--concurrency N] [--chunk-size S] [--part-size S] [--protocol form|v1|v2|auto]
                 [--checkpoint PATH | --no-checkpoint] [--limit-rate S] [--timeout SEC] [--retries N]
                 [--json] [--verbose]
      up-cli etag FILE
      up-cli abort FILE [--key K] [--biz URL --api-key K | --token T] [--up-host URL ...] [--checkpoint PATH]

    COMMANDS:
      put    uploads FILE; resumes from its checkpoint when one is left from an interrupted run
      etag   prints FILE's Qiniu etag (the "hash" the servers report), reading it in a stream
      abort  deletes FILE's checkpoint and aborts its multipart (v2) upload on the server

    TARGET (one of):
      --biz URL          biz-server base URL: upload tokens come from POST /v1/uptoken and are
                         renewed before they expire
      --api-key K        the biz-server API key (default: $UPGATE_API_KEY; never printed)
      --token T          a ready upload token (from any Qiniu SDK or service)
      --up-host URL      up host, repeat for fail-over (default: the hosts biz-server hands out
                         with the token, else http://127.0.0.1:9000)

    OPTIONS:
      --key K            object key (default: the token's saveKey, else the etag)
      --protocol P       auto (form up to 4 MiB, v1 above) | form | v1 | v2 (default auto)
      --concurrency N    blocks / parts in flight, 1-64 (default 4)
      --chunk-size S     v1 chunk size, 1K-4M (default 4M)
      --part-size S      v2 part size, 1M-1G (default 4M)
      --checkpoint PATH  where to keep the resume record (default: $XDG_STATE_HOME/upgate, else
                         ~/.local/state/upgate, one file per FILE + key + target)
      --no-checkpoint    keep no resume record: an interrupted upload starts over
      --limit-rate S     send at most S bytes per second (e.g. 16M); default unlimited
      --timeout SEC      the time allowed for one request, body included (e.g. 5, 2.5); a stalled
                         request fails after it and is retried (default 60)
      --retries N        retries per request after the first attempt, 0-100, on network errors,
                         408, 429 and retryable 5xx, with backoff from 0.5 s doubling (default 3)
      --json             JSON lines on standard output (also when standard output is not a
                         terminal): {"event":"progress",...} at most 5 per second, then
                         {"event":"done",...} with the server's reply
      --verbose          the settings, up hosts and checkpoint in use, on standard error
      --help             this text
    Sizes: bytes, or with a binary suffix: 512K, 1.5M, 4M, 1G.

    Ctrl-C pauses: the checkpoint is kept and the same command resumes. A second Ctrl-C quits at once.

    EXIT STATUS:
      0    uploaded (etag, abort: done)
      1    upload failed: the server refused it or the network failed after retries
      2    bad command line
      3    integrity: a crc32 or the final hash did not match the local file
      4    file or checkpoint problem (missing, unreadable, changed while uploading, locked)
      5    token refused (biz-server rejected the API key, or the up host rejected the token)
      130  paused by Ctrl-C; run the same command again to resume
    """
