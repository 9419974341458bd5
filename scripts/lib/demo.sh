# The demo's upload, shared by scripts/demo (one up-server, one biz-server) and scripts/cluster --demo
# (through nginx in front of several of each). Sourced, never run; needs scripts/lib/common.sh.
#
#   demo_upload BIN UP BIZ [BIZ_INSTANCE...]
#       creates a 64 MiB file in $work, uploads it with $BIN/up-cli through BIZ's token (resumable
#       v1, 2 blocks in flight, 1 MiB chunks), interrupts it with Ctrl-C (SIGINT) once about a third
#       is up, runs the same command again (it resumes from the checkpoint), then checks with
#       scripts/demo_check.py: the record, the reply, the official SDK's etag = `up-cli etag` = stat =
#       the callback's hash, one record and one delivery (biz-server's counters, summed over every
#       BIZ_INSTANCE, default BIZ), the bytes downloaded back from UP. Dies on any failure.
#   $python: the scripts/pyenv venv's python; `step` prints a heading; DEMO_RATE: up-cli's --limit-rate.

demo_upload() {
    local bin="$1" up="$2" biz="$3" instance
    shift 3
    local metrics=()
    for instance in "${@:-$biz}"; do metrics+=(--biz-metrics "$instance"); done
    step "creating a 64 MiB file"
    file="$work/demo-64m.bin"
    size=$((64 << 20))
    "$python" -c 'import sys, harness as h; h.make_file(sys.argv[1], int(sys.argv[2]), 20260401)' "$file" "$size"
    sdk_etag="$("$python" -c 'import sys, harness as h; print(h.etag(sys.argv[1]))' "$file")"
    cli_etag="$("$bin/up-cli" etag "$file")"
    echo "$file: $size bytes, etag $sdk_etag (official SDK, qiniu.etag); up-cli etag says $cli_etag" >&2

    key="demo/demo-64m.bin"
    checkpoint="$work/ckpt.json"
    put=("$bin/up-cli" put "$file" --key "$key" --biz "$biz" --api-key dev-api-key --checkpoint "$checkpoint"
        --concurrency 2 --chunk-size 1M --json --limit-rate "${DEMO_RATE:-16M}")

    step "uploading, and pressing Ctrl-C once a third is up"
    echo "\$ ${put[*]}" >&2
    "${put[@]}" >"$work/run1.jsonl" 2>"$work/run1.log" &
    cli_pid=$!
    track_pid "$cli_pid"
    threshold=$((size * 30 / 100))
    interrupted_at=""
    while kill -0 "$cli_pid" 2>/dev/null; do
        sent="$(grep -o '"event":"progress","bytesSent":[0-9]*' "$work/run1.jsonl" | tail -n 1 | sed 's/.*://' || true)"
        if [[ -n "$sent" ]] && ((sent >= threshold)); then
            interrupted_at="$sent"
            kill -INT "$cli_pid"
            break
        fi
        sleep 0.05
    done
    status=0
    wait "$cli_pid" || status=$?
    cat "$work/run1.log" >&2
    [[ -n "$interrupted_at" ]] || die "the upload ended (status $status) before reaching 30 %; try a lower DEMO_RATE"
    ((status == 130)) || die "up-cli exited with $status after Ctrl-C, expected 130 (paused)"
    [[ -f "$checkpoint" ]] || die "no checkpoint at $checkpoint after the pause"
    echo "Ctrl-C at $interrupted_at of $size bytes ($((interrupted_at * 100 / size)) %): exit 130, checkpoint kept ($(wc -c <"$checkpoint") bytes)" >&2
    tail -n 1 "$work/run1.jsonl" >&2

    step "running the same command again: it resumes"
    status=0
    "${put[@]}" >"$work/run2.jsonl" 2>"$work/run2.log" || status=$?
    cat "$work/run2.log" >&2
    ((status == 0)) || { tail -n 3 "$work/run2.jsonl" >&2; die "the resumed upload exited with $status"; }
    [[ ! -e "$checkpoint" ]] || die "the checkpoint is still there after a successful upload"

    step "checking: record, reply, etag, stored hash, delivery, downloaded bytes"
    "$python" "$UPGATE_ROOT/scripts/demo_check.py" --up "$up" --biz "$biz" --file "$file" --key "$key" \
        --sdk-etag "$sdk_etag" --cli-etag "$cli_etag" --run "$work/run2.jsonl" --download "$work/downloaded.bin" "${metrics[@]}" \
        || die "a check failed"
    cmp "$file" "$work/downloaded.bin" || die "cmp: downloaded bytes differ"
}
