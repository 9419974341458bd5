/// `up-cli --help` and each command's own `--help`.
enum Usage {
    /// `up-cli --help`.
    static let global = """
        up-cli — the Upgate reference upload client (Qiniu form, resumable v1 and multipart v2).

        USAGE:
          up-cli put FILE [--key K] [--biz URL --api-key K | --token T] [OPTIONS]
          up-cli etag FILE
          up-cli abort FILE [--key K] [--biz URL --api-key K | --token T] [--up-host URL ...] [--checkpoint PATH]
          up-cli --version

        COMMANDS:
          put    uploads FILE; resumes from its checkpoint when one is left from an interrupted run
          etag   prints FILE's Qiniu etag (the "hash" the servers report), reading it in a stream
          abort  deletes FILE's checkpoint and aborts its multipart (v2) upload on the server

        'up-cli COMMAND --help' describes a command's options.
        """ + "\n\n" + exitStatus

    /// `up-cli put --help`.
    static let put = """
        up-cli put — upload FILE; resume from its checkpoint when an earlier run was interrupted.

        USAGE:
          up-cli put FILE [--key K] [--biz URL --api-key K | --token T] [--up-host URL ...]
                     [--concurrency N] [--chunk-size S] [--part-size S] [--protocol form|v1|v2|auto]
                     [--checkpoint PATH | --no-checkpoint] [--limit-rate S] [--timeout SEC] [--retries N]
                     [--json] [--verbose]
        """ + "\n\n" + target + "\n\n" + """
        OPTIONS:
          --key K            object key (default: the token's key when --token is scoped to one key,
                             else the token's saveKey, else the etag)
          --protocol P       auto (form up to 4 MiB, v1 above) | form | v1 | v2 (default auto)
          --concurrency N    blocks / parts in flight, 1-64 (default 4)
          --chunk-size S     v1 chunk size, 1K-4M (default 4M)
          --part-size S      v2 part size, 1M-1G (default 4M)
          --checkpoint PATH  where to keep the resume record (default: $XDG_STATE_HOME/upgate, else
                             ~/.local/state/upgate, one file per FILE + key + target)
          --no-checkpoint    keep no resume record: an interrupted upload starts over
          --limit-rate S     send at most S bytes per second, evenly, whatever the protocol (e.g. 16M);
                             default unlimited
          --timeout SEC      the time allowed for one request, body included (e.g. 5, 2.5); a stalled
                             request fails after it and is retried (default 60)
          --retries N        retries per request after the first attempt, 0-100, on network errors,
                             408, 429 and retryable 5xx, with backoff from 0.5 s doubling (default 3)
          --json             JSON lines on standard output (also when standard output is not a
                             terminal): {"event":"start",...} once the up hosts and the checkpoint are
                             known, {"event":"progress",...} at most 5 per second, then one of
                             {"event":"done",...} with the server's reply, {"event":"stored",...}
                             (exit 6), {"event":"paused",...} or {"event":"error",...}
          --verbose          the settings, up hosts and checkpoint in use, on standard error
          -h, --help         this text

        Sizes: bytes, or with a binary suffix: 512K, 1.5M, 4M, 1G.

        The file must not change while it is uploaded: an upload whose file changes (size,
        modification time or inode) is stopped and never completed, its checkpoint removed (exit 4).
        Ctrl-C pauses: the checkpoint is kept and the same command resumes. A second Ctrl-C quits at once.
        """ + "\n\n" + exitStatus

    /// `up-cli abort --help`.
    static let abort = """
        up-cli abort — delete the checkpoint `put` would resume from with the same arguments, and
        abort its multipart (v2) upload on the server.

        USAGE:
          up-cli abort FILE [--key K] [--biz URL --api-key K | --token T] [--up-host URL ...]
                       [--checkpoint PATH]
        """ + "\n\n" + target + "\n\n" + exitStatus

    /// `up-cli etag --help`.
    static let etag = """
        up-cli etag — print FILE's Qiniu etag (qiniu-protocol.md §7.1), reading it 1 MiB at a time.

        USAGE:
          up-cli etag FILE
        """ + "\n\n" + exitStatus

    private static let target = """
        TARGET (one of):
          --biz URL          biz-server base URL: upload tokens come from POST /v1/uptoken and are
                             renewed before they expire
          --api-key K        the biz-server API key (default: $UPGATE_API_KEY; never printed)
          --token T          a ready upload token (from any Qiniu SDK or service)
          --up-host URL      up host, repeat for fail-over (default: the hosts biz-server hands out
                             with the token, else http://127.0.0.1:9000)
        """

    private static let exitStatus = """
        EXIT STATUS:
          0    uploaded (etag, abort: done)
          1    upload failed: the server refused it, or the network (up host or biz-server) failed
               after retries
          2    bad command line
          3    integrity: a crc32 or the final hash did not match the bytes sent
          4    file or checkpoint problem: missing, unreadable, locked, or the file changed while
               uploading (nothing was completed; the checkpoint is removed)
          5    token refused: biz-server rejected the API key, or the up host rejected the token
               (401, or 403 for a key outside the token's scope)
          6    stored, but the app's callback failed (579): the object and its hash are final and
               up-server retries the callback; do not upload again
          130  paused by Ctrl-C; run the same command again to resume
        """
}
