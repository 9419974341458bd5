# The one bash library of scripts/: sourced (never run) by every bash script there.
#
#   source "$(dirname "$0")/../lib/common.sh"     (path relative to the sourcing script)
#   common_init NAME                              message prefix, EXIT/INT/TERM traps
#
# What it gives:
#   say / die              "NAME: text" / "NAME: FAILED: text" (exit 1), both on stderr
#   free_port              a free 127.0.0.1 port
#   wait_ready N PID URL   poll URL until 2xx, fail fast if PID dies (bounded: 20 s)
#   stop_pid PID           SIGTERM, then SIGKILL after 5 s; reaps it
#   track_pid PID          stopped by pid (all at once) when the script exits, whatever the reason
#   track_log FILE         its last lines are shown when the script fails
#   on_exit FUNCTION       run on exit, before the pids are stopped ($common_status: the exit status)
#   make_work_dir P [K]    sets $work: a temp dir removed on exit (kept when K is non-empty)
#   "${clean_env[@]}" CMD  CMD without the UPGATE_* overrides of the development keys
#   build_products CONF P… `swift build -c CONF --product P` for each, with a progress line
#   upgate_python          the scripts/pyenv venv's python (scripts/lib is on PYTHONPATH)
#   run_python_suite S A…  exec S under that python
#   summary NAME STATUS D  the suite's summary line on stdout: "NAME: STATUS D"
#   note_skip NAME WHY     records a skipped suite for scripts/test's last line ($UPGATE_SKIP_FILE)
#
# Nothing here waits without a bound, and every process it starts is tracked by its pid.

# Sourced once per shell (bootstrap, itself sourced by others, sources it too).
[[ -n "${common_loaded:-}" ]] && return 0
common_loaded=1
UPGATE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
common_name="${common_name:-$(basename "$0")}"
common_pids=()
common_logs=()
common_show_logs=1
common_exit_hooks=()
work=""

say() { echo "$common_name: $*" >&2; }
die() { echo "$common_name: FAILED: $*" >&2; exit 1; }

# common_init NAME: the message prefix, and the traps that stop what this script started.
common_init() {
    common_name="$1"
    trap common_cleanup EXIT
    trap 'exit 130' INT TERM    # a signal becomes an exit, so the EXIT trap still runs
}

free_port() {
    python3 "$UPGATE_ROOT/scripts/lib/ports.py"   # below the ephemeral range: see ports.py
}

# wait_ready NAME PID URL [SECONDS]: polls URL until it answers 2xx; fails as soon as PID exits.
wait_ready() {
    local name="$1" pid="$2" url="$3" limit="${4:-20}" i
    for ((i = 0; i < limit * 10; i++)); do
        curl -fsS -o /dev/null --max-time 1 "$url" 2>/dev/null && return 0
        kill -0 "$pid" 2>/dev/null || die "$name exited before answering $url"
        sleep 0.1
    done
    die "$name did not answer $url within $limit s"
}

# stop_pid PID: SIGTERM, at most 5 s of grace, then SIGKILL; reaps the child.
stop_pid() {
    local pid="$1" i
    kill -TERM "$pid" 2>/dev/null || return 0
    for ((i = 0; i < 50; i++)); do
        kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

track_pid() { common_pids+=("$1"); }
track_log() { common_logs+=("$1"); }
on_exit() { common_exit_hooks+=("$1"); }

# make_work_dir PREFIX [KEEP]: $work, removed on exit unless KEEP is non-empty (then its path is
# printed).
common_keep=""
make_work_dir() {
    work="$(mktemp -d -t "$1.XXXXXX")"
    common_keep="${2:-}"
}

common_status=0
common_cleanup() {
    local status=$? pid log hook
    common_status=$status   # for the exit hooks
    for hook in "${common_exit_hooks[@]}"; do "$hook" || true; done
    # All at once: each may wait out a grace period for connections left half-open.
    for pid in "${common_pids[@]}"; do stop_pid "$pid" & done
    wait 2>/dev/null || true
    if ((status != 0 && common_show_logs)); then
        for log in "${common_logs[@]}"; do
            [[ -s "$log" ]] && { echo "--- last lines of $log" >&2; tail -n 20 "$log" >&2; }
        done
    fi
    if [[ -n "$work" ]]; then
        if [[ -n "$common_keep" ]]; then say "work directory kept: $work"; else rm -rf "$work"; fi
    fi
    return "$status"
}

# The UPGATE_* variables would replace the development keys the Config/ files share: drop them.
clean_env=(env -u UPGATE_ACCESS_KEY -u UPGATE_SECRET_KEY -u UPGATE_API_KEYS -u UPGATE_API_KEY
    -u UPGATE_BIZ_PUBLIC_BASE_URL -u UPGATE_UP_PUBLIC_BASE_URL -u UPGATE_CTX_SECRET -u UPGATE_UP_HOSTS)

# build_products CONFIGURATION PRODUCT...: one `swift build` per product (it honours only the last
# of several --product options). While one builds, a progress line ("[412/530] 48 s") every 10 s,
# or in place on a terminal; on failure the last 40 lines of the build log.
build_products() {
    local configuration="$1" product log started pid progress last=0
    shift
    for product in "$@"; do
        log="$(mktemp -t "upgate-build-$product.XXXXXX")"
        started=$SECONDS
        swift build -c "$configuration" --product "$product" >"$log" 2>&1 &
        pid=$!
        while kill -0 "$pid" 2>/dev/null; do
            sleep 1
            progress="$(grep -oE '^\[[0-9]+/[0-9]+\]' "$log" | tail -n 1 || true)"
            if [[ -t 2 ]]; then
                printf '\r%s: building %s (%s): %s %d s   ' "$common_name" "$product" "$configuration" \
                    "${progress:-starting}" $((SECONDS - started)) >&2
            elif ((SECONDS - last >= 10)); then
                last=$SECONDS
                say "building $product ($configuration): ${progress:-starting} after $((SECONDS - started)) s"
            fi
        done
        [[ -t 2 ]] && printf '\r\033[K' >&2
        if ! wait "$pid"; then
            tail -n 40 "$log" >&2
            die "swift build -c $configuration --product $product failed (full log: $log)"
        fi
        say "built $product ($configuration) in $((SECONDS - started)) s$(grep -q 'Compiling' "$log" || echo ', it was up to date')"
        rm -f "$log"
    done
}

# upgate_python: the venv's python (official qiniu SDK), after making sure it exists.
upgate_python() {
    "$UPGATE_ROOT/scripts/pyenv"
}
export PYTHONPATH="$UPGATE_ROOT/scripts/lib${PYTHONPATH:+:$PYTHONPATH}"

# run_python_suite SCRIPT ARG...: replaces this shell with SCRIPT under the venv's python (the
# script's own directory is on its sys.path, scripts/lib through PYTHONPATH).
run_python_suite() {
    local script="$1" python
    shift
    python="$(upgate_python)" || die "scripts/pyenv failed"
    exec "$python" "$script" "$@"
}

# summary NAME STATUS DETAIL: the one line a suite ends with (scripts/test shows them all).
summary() {
    local name="$1" status="$2"
    shift 2
    echo "$name: $status${*:+ $*}"
}

# note_skip NAME WHY: a suite that could not run here; scripts/test names it in its last line.
note_skip() {
    [[ -n "${UPGATE_SKIP_FILE:-}" ]] && echo "$1 ($2)" >>"$UPGATE_SKIP_FILE"
    return 0
}
