# shellcheck shell=bash
# Shared helpers for the bench/ scripts: source it (`. "$(dirname "$0")/lib.sh"`), do not run it.
#
# A script calls `bench_init NAME` first. From then on, whatever happens (success, error, Ctrl-C,
# SIGTERM), every process it started with `bench_spawn` is stopped (TERM, then KILL after 10 s)
# and its throwaway cluster (bench/.work/NAME, started with `bench_start_cluster`) is stopped and
# deleted (kept, stopped, with BENCH_KEEP_CLUSTER=1). Logs and the summary go to
# bench/results/NAME-<timestamp>/.
#
# Environment:
#   STORELEDGER_BIN     the binary to measure (default .build/release/storeledger)
#   BENCH_MALLOC        the allocator the storeledger processes run with: jemalloc (default: Debian's libjemalloc2,
#                       preloaded as deploy/ runs the processes; `apt-get install -y libjemalloc2`) or glibc (the C
#                       library's malloc). Only storeledger's processes get it: PostgreSQL, psql and pgbench do not.
#   LOG_LEVEL           passed to storeledger (default warning: per-request info logs cost throughput)
#   ADMIN_PORT          passed to storeledger (default off: two workers, or anything else on the machine,
#                       would collide on the fixed defaults 9090/9091 and exit; metrics are still recorded,
#                       only not served; the scripts use the public port's /readyz)
#   BENCH_KEEP_CLUSTER  1 to keep the stopped cluster's data directory for inspection
#   PG_FSYNC            passed to scripts/pg (default on: commits are durable, as in production)
#   PGBENCH_MODE        pgbench -M for the baselines (default prepared: the ceiling; "extended"
#                       parses and plans every execution, as PostgresNIO's query() does)

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$BENCH_DIR/.." && pwd)
STORELEDGER=${STORELEDGER_BIN:-$REPO_ROOT/.build/release/storeledger}
BENCH_MALLOC=${BENCH_MALLOC:-jemalloc}
# How every script runs storeledger: the binary, preloaded with the allocator (`env` execs it: the PID is storeledger's).
STORELEDGER_RUN=("$STORELEDGER")
export LOG_LEVEL=${LOG_LEVEL:-warning}
export ADMIN_PORT=${ADMIN_PORT:-off}
PGBENCH_MODE=${PGBENCH_MODE:-prepared}

BENCH_PIDS=()
BENCH_CLUSTER=""
BENCH_NAME=""
RESULTS=""

bench_log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
bench_die() { bench_log "error: $*"; exit 1; }

# Prints a line of the summary and appends it to $RESULTS/summary.txt.
bench_report() { printf '%s\n' "$*" | tee -a "$RESULTS/summary.txt"; }

bench_require() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 || bench_die "$tool is not installed (apt-get install -y $tool)"
  done
}

# bench_init NAME: results folder, cleanup trap, preflight checks.
bench_init() {
  BENCH_NAME=$1
  RESULTS="$BENCH_DIR/results/$BENCH_NAME-$(date +%Y%m%d-%H%M%S)"
  mkdir -p "$RESULTS" "$BENCH_DIR/.work"
  trap bench_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  [ -x "$STORELEDGER" ] || bench_die "$STORELEDGER not found; build it: swift build -c release --product storeledger"
  case $BENCH_MALLOC in
    jemalloc)
      BENCH_MALLOC_LIBRARY=$(ldconfig -p | awk '$1 == "libjemalloc.so.2" { print $NF; exit }')
      [ -n "$BENCH_MALLOC_LIBRARY" ] || bench_die "libjemalloc.so.2 is not installed (apt-get install -y libjemalloc2), or run with BENCH_MALLOC=glibc"
      STORELEDGER_RUN=(env "LD_PRELOAD=$BENCH_MALLOC_LIBRARY" "$STORELEDGER") ;;
    glibc) ;;
    *) bench_die "BENCH_MALLOC must be jemalloc or glibc, not $BENCH_MALLOC" ;;
  esac
  bench_require psql python3 curl
  BENCH_LOAD_AT_START=$(cut -d' ' -f1-3 /proc/loadavg)
  bench_log "results in ${RESULTS#"$REPO_ROOT"/} (load average $BENCH_LOAD_AT_START)"
}

bench_cleanup() {
  local rc=$? pid i
  trap - EXIT INT TERM
  set +e
  if [ "${#BENCH_PIDS[@]}" -gt 0 ]; then
    for pid in "${BENCH_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    for i in $(seq 100); do
      local alive=0
      for pid in "${BENCH_PIDS[@]}"; do bench_alive "$pid" && alive=1; done
      [ "$alive" = 0 ] && break
      sleep 0.1
    done
    for pid in "${BENCH_PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null; done
    wait 2>/dev/null
  fi
  if [ -n "$BENCH_CLUSTER" ]; then
    if [ "${BENCH_KEEP_CLUSTER:-0}" = 1 ]; then
      "$REPO_ROOT/scripts/pg" stop "$BENCH_CLUSTER"
    else
      "$REPO_ROOT/scripts/pg" destroy "$BENCH_CLUSTER"
    fi
  fi
  exit "$rc"
}

# bench_spawn LOGFILE COMMAND...: starts COMMAND in the background, logging to LOGFILE; its pid is
# left in BENCH_LAST_PID and it is stopped on exit.
bench_spawn() {
  local logfile=$1; shift
  "$@" >"$logfile" 2>&1 </dev/null &
  BENCH_LAST_PID=$!
  BENCH_PIDS+=("$BENCH_LAST_PID")
}

# bench_alive PID: the process exists and is not a zombie.
bench_alive() {
  local state
  state=$(sed -E 's/.*\) (.).*/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

# bench_forget PID: after PID was reaped (`wait`), so that cleanup never signals a reused pid.
bench_forget() {
  local pid kept=()
  for pid in "${BENCH_PIDS[@]}"; do [ "$pid" = "$1" ] || kept+=("$pid"); done
  BENCH_PIDS=("${kept[@]}")
}

# bench_stop PID [SECONDS]: TERM, wait up to SECONDS (default 15), then KILL; reaps and forgets it.
bench_stop() {
  local pid=$1 limit=${2:-15} i
  if kill -TERM "$pid" 2>/dev/null; then
    for i in $(seq $((limit * 10))); do
      bench_alive "$pid" || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
  bench_forget "$pid"
}

# bench_start_cluster: a fresh throwaway cluster in bench/.work/$BENCH_NAME; exports DATABASE_URL.
bench_start_cluster() {
  BENCH_CLUSTER="$BENCH_DIR/.work/$BENCH_NAME"
  "$REPO_ROOT/scripts/pg" destroy "$BENCH_CLUSTER" >/dev/null 2>&1 || true
  DATABASE_URL=$("$REPO_ROOT/scripts/pg" start "$BENCH_CLUSTER")
  export DATABASE_URL
  bench_log "PostgreSQL at $DATABASE_URL"
}

bench_migrate() { "${STORELEDGER_RUN[@]}" migrate >"$RESULTS/migrate.log" 2>&1 || { cat "$RESULTS/migrate.log" >&2; bench_die "migrate failed"; }; }

# bench_sql SQL: runs SQL, prints unaligned tuples only.
bench_sql() { psql "$DATABASE_URL" -X -q -t -A -v ON_ERROR_STOP=1 -c "$1"; }

bench_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# bench_start_receiver: `storeledger serve` on a free loopback port; sets RECEIVER_URL, RECEIVER_PID.
bench_start_receiver() {
  local port
  port=$(bench_free_port)
  HOST=127.0.0.1 PORT=$port bench_spawn "$RESULTS/receiver.log" "${STORELEDGER_RUN[@]}" serve
  RECEIVER_PID=$BENCH_LAST_PID
  RECEIVER_URL="http://127.0.0.1:$port"
  bench_wait_http "$RECEIVER_URL/readyz" 60 || { tail -20 "$RESULTS/receiver.log" >&2; bench_die "the receiver did not become ready"; }
  bench_log "receiver at $RECEIVER_URL (pid $RECEIVER_PID)"
}

# bench_wait_http URL SECONDS: waits for a 200.
bench_wait_http() {
  local url=$1 limit=$2 i
  for i in $(seq $((limit * 10))); do
    curl -fsS -o /dev/null --max-time 1 "$url" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# bench_wait_queue_settled SECONDS: waits until no event is pending or processing; fails on timeout.
# The poll must stay cheap with a large history: two EXISTS probes use the partial indexes, where
# count(*) ... WHERE state IN (...) is a (parallel) sequential scan of the whole queue table
# (~80 ms of CPU on 3 processes with 1.4M rows, every poll, on the machine being measured).
# Polls once a second: each psql costs ~20 ms of CPU on the measured machine, and rates are taken from
# finished_at, so a later notice of the end changes only the wall-clock figures.
# Fails at once when a process in BENCH_WATCHED_PIDS (space-separated) has exited.
bench_wait_queue_settled() {
  local limit=$1 deadline pid
  deadline=$(($(date +%s) + limit))
  while true; do
    for pid in ${BENCH_WATCHED_PIDS:-}; do
      bench_alive "$pid" || { bench_log "process $pid exited while the queue was draining"; return 1; }
    done
    [ "$(bench_sql "SELECT EXISTS (SELECT 1 FROM event_queue WHERE state = 'pending')
                           OR EXISTS (SELECT 1 FROM event_queue WHERE state = 'processing')")" = f ] && return 0
    if [ "$(date +%s)" -ge "$deadline" ]; then
      bench_log "queue not settled after ${limit}s: $(bench_sql "SELECT count(*) FROM event_queue WHERE state IN ('pending', 'processing')") left"
      return 1
    fi
    sleep 1
  done
}

# bench_make_body FILE [BYTES]: a realistic notification body {"signedPayload":"<h>.<p>.<s>"} of
# about BYTES (default 3072) with no trailing newline. The header carries a fake x5c chain, the
# payload a base64url JSON claims set; the signature ends with 20 digits that load generators
# replace to make every body (and its SHA-256) distinct.
bench_make_body() {
  python3 - "$1" "${2:-3072}" <<'PY'
import base64, json, random, sys
path, size = sys.argv[1], int(sys.argv[2])
rng = random.Random(42)
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
def blob(n): return base64.b64encode(bytes(rng.getrandbits(8) for _ in range(n))).decode()
claims = {"notificationType": "DID_RENEW", "notificationUUID": "4b1d4a4e-4a7e-4f3e-9c0b-0c6d0f3b9f2a",
          "data": {"appAppleId": 1234567890, "bundleId": "com.example.app", "environment": "Production",
                   "signedTransactionInfo": "", "signedRenewalInfo": ""},
          "version": "2.0", "signedDate": 1700000000000}
signature = b64(bytes(rng.getrandbits(8) for _ in range(48))) + "0" * 20  # 64 + 20 chars
def body(cert_bytes):
    header = b64(json.dumps({"alg": "ES256", "x5c": [blob(cert_bytes), blob(cert_bytes // 2)]}).encode())
    payload = b64(json.dumps(claims).encode())
    return '{"signedPayload":"%s.%s.%s"}' % (header, payload, signature)
claims["data"]["signedTransactionInfo"] = b64(bytes(rng.getrandbits(8) for _ in range(size // 4)))
cert = 16
while len(body(cert)) < size: cert += 16
with open(path, "w") as f: f.write(body(cert))
PY
}

# bench_verify_limit LINES ITERATIONS: the verification limit per core (per CPU second) on signed notifications, one body
# per line in LINES (signed for com.example.storeledger, Sandbox, trusted through APPLE_ROOT_CAS_DER_BASE64):
# `verify --benchmark ITERATIONS --each-line` (the lines in turn) and the first line VERIFY_ITERATIONS times (default
# 3000: warm caches, a higher limit); outputs in $RESULTS/verify-K.txt and verify-one-K.txt, K counting the calls.
# A script calls it before and after what it measures: this shared machine's speed drifts (the same 20,000
# verifications were seen at 4,600/s and at 3,500/s a few minutes apart), so VERIFY_RATE and VERIFY_ONE_RATE are the
# highest of the calls so far (the fastest verification seen: the strictest limit) and VERIFY_RATES lists every
# measurement ("4523.5 4601.2").
VERIFY_CALLS=0 VERIFY_RATE=0 VERIFY_ONE_RATE=0 VERIFY_RATES=""
bench_verify_limit() {
  local rate one
  VERIFY_CALLS=$((VERIFY_CALLS + 1))
  bench_verify "$RESULTS/verify-$VERIFY_CALLS.txt" "$2" --each-line "$1" || bench_die "verify --benchmark failed (see $RESULTS/verify.log)"
  rate=$(bench_verify_rate "$RESULTS/verify-$VERIFY_CALLS.txt")
  head -n 1 "$1" >"$RESULTS/verify-input.json"
  bench_verify "$RESULTS/verify-one-$VERIFY_CALLS.txt" "${VERIFY_ITERATIONS:-3000}" "$RESULTS/verify-input.json" \
    || bench_die "verify --benchmark failed (see $RESULTS/verify.log)"
  one=$(bench_verify_rate "$RESULTS/verify-one-$VERIFY_CALLS.txt")
  VERIFY_RATES="${VERIFY_RATES:+$VERIFY_RATES }$rate"
  VERIFY_RATE=$(bench_max "$VERIFY_RATE" "$rate")
  VERIFY_ONE_RATE=$(bench_max "$VERIFY_ONE_RATE" "$one")
}

# bench_verify_limit_all_cores LINES ITERATIONS: the same `verify --benchmark ITERATIONS --each-line` as bench_verify_limit,
# run by as many processes at once as there are cores; VERIFY_ALL_CORES_RATE is their mean rate per CPU second (the
# highest of the calls so far). Context, not the goal's limit: it says what a core verifies while every core does
# (a process that verifies on both cores, like the rebuild, meets that rate, not the one-process limit).
VERIFY_ALL_CORES_RATE=0
bench_verify_limit_all_cores() {
  local k pids=()
  VERIFY_CALLS=$((VERIFY_CALLS + 1))
  for k in $(seq "$(nproc)"); do
    bench_verify "$RESULTS/verify-$VERIFY_CALLS-core$k.txt" "$2" --each-line "$1" &
    pids+=("$!")
  done
  for k in "${pids[@]}"; do wait "$k" || bench_die "verify --benchmark failed (see $RESULTS/verify.log)"; done
  VERIFY_ALL_CORES_RATE=$(bench_max "$VERIFY_ALL_CORES_RATE" "$(bench_verify_rate "$RESULTS/verify-$VERIFY_CALLS"-core*.txt)")
}

# bench_verify OUT ITERATIONS ARGS...: `storeledger verify --benchmark ITERATIONS ARGS...` on notifications signed for
# com.example.storeledger in Sandbox, its report in OUT (errors appended to $RESULTS/verify.log).
bench_verify() {
  local out=$1 iterations=$2
  shift 2
  "${STORELEDGER_RUN[@]}" verify --benchmark "$iterations" --bundle-id com.example.storeledger --environment Sandbox "$@" \
    >"$out" 2>>"$RESULTS/verify.log"
}

# bench_verify_rate REPORT...: the verifications per CPU second of `verify --benchmark` reports (their mean, if several).
bench_verify_rate() {
  cat "$@" | awk '/^verifications\/s:/ { s += $2; n++ } END { if (n) printf "%.1f\n", s / n }'
}

# bench_max A B: the larger of two numbers.
bench_max() { awk -v a="$1" -v b="$2" 'BEGIN { print (b + 0 > a + 0) ? b : a }'; }

# bench_cpu_against_limit CPU_SECONDS EVENTS: "X ms (verification alone Y ms): ratio Z (against one notification
# repeated, W ms: R)": a process's CPU time per event against the limits bench_verify_limit set (VERIFY_RATE,
# VERIFY_ONE_RATE: the fastest of its calls): the goal's ratio by CPU time.
bench_cpu_against_limit() {
  awk -v c="$1" -v n="$2" -v v="$VERIFY_RATE" -v o="$VERIFY_ONE_RATE" 'BEGIN {
    printf "%.3f ms (verification alone %.3f ms): ratio %.2f (against one notification repeated, %.3f ms: %.2f)\n",
      1000 * c / n, 1000 / v, n / (c * v), 1000 / o, n / (c * o) }'
}

# bench_ratio A B: A / B with two decimals ("n/a" when B is 0 or empty).
bench_ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "n/a"; else printf "%.2f\n", a / b }'; }

# bench_ms VALUE: a wrk latency (e.g. 812.00us, 2.35ms, 1.02s) in milliseconds.
bench_ms() {
  awk -v v="$1" 'BEGIN {
    n = v + 0; u = v; sub(/^[0-9.]+/, "", u)
    if (u == "us") n /= 1000; else if (u == "s") n *= 1000; else if (u == "m") n *= 60000
    printf "%.2f\n", n }'
}

# bench_sign FILE SEED SELECTION...: `storeledger simulate SELECTION... --output FILE`, signed by the development CA in
# bench/.work/dev-ca (renewed when it does not cover the run's dates) for com.example.storeledger in Sandbox.
bench_sign() {
  local file=$1 seed=$2
  shift 2
  bench_log "signing: storeledger simulate $* --seed $seed --output"
  timeout 3600 "${STORELEDGER_RUN[@]}" simulate "$@" --seed "$seed" --ca-dir "$BENCH_DIR/.work/dev-ca" --renew-ca \
    --bundle-id com.example.storeledger --environment Sandbox --output "$file" 2>>"$RESULTS/simulate.log" \
    || bench_die "simulate failed (see $RESULTS/simulate.log)"
}

# bench_sign_random FILE N: N notifications of random simulated lifecycles (seed 42) into FILE.
bench_sign_random() { bench_sign "$1" 42 --random --rate 1000 --duration "$(awk -v n="$2" 'BEGIN { print n / 1000 }')"; }

# bench_trust_dev_ca: exports what a storeledger process needs to accept what bench_sign signed
# (APPLE_ROOT_CAS_DER_BASE64, APP_BUNDLE_ID, APPLE_ENVIRONMENTS=Sandbox).
bench_trust_dev_ca() {
  APPLE_ROOT_CAS_DER_BASE64=$("${STORELEDGER_RUN[@]}" simulate --print-root --ca-dir "$BENCH_DIR/.work/dev-ca")
  export APPLE_ROOT_CAS_DER_BASE64 APP_BUNDLE_ID=com.example.storeledger APPLE_ENVIRONMENTS=Sandbox
}

# bench_queue_states [CONDITION]: "state=count ..." of event_queue's rows (those matching the SQL CONDITION, if given).
bench_queue_states() {
  bench_sql "SELECT string_agg(state || '=' || n, ' ' ORDER BY state)
             FROM (SELECT state, count(*) n FROM event_queue WHERE ${1:-true} GROUP BY state) s"
}

# bench_cpu_seconds PID: user+system CPU seconds the process has used so far.
bench_cpu_seconds() {
  awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f\n", ($14 + $15) / hz }' "/proc/$1/stat" 2>/dev/null || echo 0
}

# bench_minor_faults PID: the minor page faults the process has taken so far (pages the kernel zeroed or copied for
# it: memory the allocator handed back to the system and touched again shows here).
bench_minor_faults() {
  awk '{ print $10 }' "/proc/$1/stat" 2>/dev/null || echo 0
}

# bench_perf_record PID NAME [-- COMMAND...]: `perf record` of the whole machine (-a) at BENCH_PERF_FREQ Hz (default
# 499), stacks by BENCH_PERF_CALL_GRAPH (default fp; dwarf unwinds frames without a frame pointer), into
# $RESULTS/perf-NAME.data, until COMMAND ends or perf gets SIGINT; PID, the process of interest, is written to
# $RESULTS/perf-NAME.pid (read its samples with `perf report -i FILE --pid PID`, or PostgreSQL's beside them). Whole
# machine because `perf record -p PID` stopped recording any sample on this VM in the middle of a session (2026-11-27;
# `perf stat --per-thread -p` still counted) while `-a` kept working. It replaces the calling shell: run it as
# `bench_perf_record ... &`, so that $! is perf itself (SIGINT to $! then stops it cleanly).
bench_perf_record() {
  local pid=$1 name=$2
  shift 2
  echo "$pid" >"$RESULTS/perf-$name.pid"
  exec perf record -a --call-graph "${BENCH_PERF_CALL_GRAPH:-fp}" -F "${BENCH_PERF_FREQ:-499}" -o "$RESULTS/perf-$name.data" "$@" \
    >"$RESULTS/perf-$name.log" 2>&1
}

# bench_machine: one line describing the machine, for summaries.
bench_machine() {
  local cpu
  cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
  printf 'machine: %s cores (%s), %s MiB RAM; %s; %s with %s; load average at start %s, now %s\n' "$(nproc)" "$cpu" \
    "$(awk '/MemTotal/ { printf "%d", $2 / 1024 }' /proc/meminfo)" \
    "$(psql "$DATABASE_URL" -X -t -A -c 'SHOW server_version' 2>/dev/null | sed 's/^/PostgreSQL /')" \
    "${STORELEDGER#"$REPO_ROOT"/}" "${BENCH_MALLOC_LIBRARY:-glibc malloc}" "$BENCH_LOAD_AT_START" "$(cut -d' ' -f1-3 /proc/loadavg)"
}

# bench_sample_rss PID FILE [INTERVAL]: appends "SECONDS RSS_KB CPU_SECONDS" for PID to FILE every INTERVAL seconds
# (default 1) while it runs (a background sampler, stopped on exit like any spawned process). The CPU column shows
# where in a run the process spent its CPU time (e.g. the rebuild's replay against its swap).
bench_sample_rss() {
  local pid=$1 file=$2 interval=${3:-1}
  : >"$file"
  ( start=$(date +%s.%N)
    while rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null) && [ -n "$rss" ]; do
      printf '%s %s %s\n' "$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { printf "%.0f", a - b }')" "$rss" \
        "$(bench_cpu_seconds "$pid")" >>"$file"
      sleep "$interval"
    done ) </dev/null >/dev/null 2>&1 &
  BENCH_PIDS+=("$!")
}

# bench_rss_curve FILE: the RSS samples of FILE as a short curve: at most 12 evenly spaced "Ns:MiB" points, then
# min and max.
bench_rss_curve() {
  awk '{ t[NR] = $1; r[NR] = $2 } END {
    if (NR == 0) { print "no samples"; exit }
    step = NR > 12 ? NR / 12 : 1; out = ""; min = r[1]; max = r[1]
    for (i = 1; i <= NR; i++) { if (r[i] < min) min = r[i]; if (r[i] > max) max = r[i] }
    for (k = 1; k <= NR; k += step) { i = int(k); out = out sprintf("%ss:%.0f ", t[i], r[i] / 1024) }
    printf "%sMiB (min %.0f, max %.0f MiB, %d samples)\n", out, min / 1024, max / 1024, NR }' "$1"
}

# bench_pg_cpu_seconds: CPU seconds PostgreSQL has used so far: the postmaster's own and its exited children's
# (backends count once their connection closes).
bench_pg_cpu_seconds() {
  local pid
  pid=$(head -n 1 "$BENCH_CLUSTER/data/postmaster.pid" 2>/dev/null) || { echo 0; return; }
  awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f\n", ($14 + $15 + $16 + $17) / hz }' "/proc/$pid/stat" 2>/dev/null || echo 0
}
