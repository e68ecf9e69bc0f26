# Shared by the service benchmarks (sourced, not run): starting a standalone
# chrono-sandbox or a whole `aevatar up` stack on loopback, and reading wrk's
# figures. Every function leaves its processes in BENCH_PIDS for
# bench_cleanup (the caller's EXIT trap).

bench_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bench_bin="${BENCH_BIN:-$bench_root/build/bin}"
BENCH_PIDS=()

bench_cleanup() {
  local pid
  for pid in "${BENCH_PIDS[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
  BENCH_PIDS=()
}

# bench_start_chrono DIR [serve flags...]: a standalone `chrono-sandbox serve`
# (2 workers) trusting a key of build/bin/mint_delegation; sets CHRONO_URL and
# CHRONO_TOKEN (a delegation token for it) and CHRONO_PID.
bench_start_chrono() {
  local dir="$1"
  shift
  mkdir -p "$dir"
  CHRONO_TOKEN="$("$bench_bin/mint_delegation" "$dir/jwks.json")"
  "$bench_bin/chrono-sandbox" serve --listen 127.0.0.1:0 --state-dir "$dir/state" \
    --jwks-file "$dir/jwks.json" --workers 2 --queue-depth 100000 --durable-queue-depth 100000 "$@" \
    >"$dir/out" 2>"$dir/log" &
  CHRONO_PID=$!
  BENCH_PIDS+=("$CHRONO_PID")
  for _ in $(seq 1 200); do grep -q "port" "$dir/out" 2>/dev/null && break; sleep 0.05; done
  CHRONO_URL="http://127.0.0.1:$(grep -o '[0-9]*$' "$dir/out")"
}

# bench_start_stack DIR [up flags...]: `aevatar up` (chrono-sandbox, NyxID,
# aevatar as it runs them) and the demo user's access token; sets
# AEVATAR_URL, NYXID_URL, STACK_CHRONO_URL, BEARER and STACK_PID.
bench_start_stack() {
  local dir="$1" base=$((20000 + RANDOM % 20000))
  shift
  mkdir -p "$dir"
  "$bench_bin/aevatar" up --state-dir "$dir/state" --port-base "$base" "$@" >"$dir/up.log" 2>&1 &
  STACK_PID=$!
  BENCH_PIDS+=("$STACK_PID")
  for _ in $(seq 1 300); do
    [ -s "$dir/state/credentials.json" ] && grep -q "Stop with" "$dir/up.log" && break
    kill -0 "$STACK_PID" 2>/dev/null || { cat "$dir/up.log" >&2; return 1; }
    sleep 0.1
  done
  NYXID_URL="$(jq -r .nyxid_url "$dir/state/credentials.json")"
  AEVATAR_URL="$(jq -r .aevatar_url "$dir/state/credentials.json")"
  STACK_CHRONO_URL="$(jq -r .chrono_url "$dir/state/credentials.json")"
  local password
  password="$(jq -r .demo.password "$dir/state/credentials.json")"
  BEARER="$(curl -s -H 'Content-Type: application/json' \
    -d "$(jq -n --arg p "$password" '{username: "demo", password: $p}')" \
    "$NYXID_URL/api/v1/auth/login" | jq -r .access_token)"
}

# bench_post_lua FILE BODY HEADER VALUE_ENV: a wrk script POSTing BODY (JSON)
# with HEADER set from the environment variable VALUE_ENV (never written to
# the file: tokens stay out of the work directory).
bench_post_lua() {
  cat >"$1" <<LUA
wrk.method = "POST"
wrk.body = [==[$2]==]
wrk.headers["Content-Type"] = "application/json"
wrk.headers["$3"] = os.getenv("$4")
LUA
}

# wrk --latency output on stdin -> the median in ms / requests per second.
bench_wrk_p50_ms() {
  awk '$1 == "50%" { v = $2; if (v ~ /us$/) { sub(/us$/, "", v); v /= 1000 }
       else if (v ~ /ms$/) { sub(/ms$/, "", v) } else if (v ~ /s$/) { sub(/s$/, "", v); v *= 1000 }
       printf "%.3f", v }'
}
bench_wrk_rps() { awk '/Requests\/sec/ { print $2 }'; }
bench_wrk_errors() { awk '/Non-2xx or 3xx/ { n += $5 } /Socket errors/ { n += 1 } END { print n + 0 }'; }

# Median of the numbers on stdin, one a line.
bench_median() {
  sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

bench_load() { cut -d' ' -f1-3 /proc/loadavg; }
