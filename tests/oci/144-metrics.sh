# devwld's metrics: the Prometheus text exposition that `devwlctl metrics` prints and
# --metrics serves over HTTP (unix:PATH and a loopback HOST:PORT). The text passes
# promtool's check (Debian's prometheus package); counters move when decisions happen,
# by subtree, syscall and decision; and hostile clients (slowloris, a huge request,
# garbage, more connections than allowed) neither stall the serving of containers nor
# keep a good scrape out once their deadline passed.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
PROBE=$BUILD/tests/live/probe
[ -x "$RUN" ] && [ -x "$PROBE" ] || fail "devwl-run or the live probe not built"
command -v promtool >/dev/null || skip "no promtool (Debian package prometheus)"
command -v python3 >/dev/null || skip "no python3"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/w", "rules": ["deny a", "allow c 1:3 rw"] },
             { "path": "/w/a", "rules": [] } ],
  "containers": { "node_metadata": true } }
JSON
# A free loopback port: the kernel picks one, we let it go and devwld takes it.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
start_devwld --metrics "127.0.0.1:$port" --metrics-containers
# The unix form, from a second daemon of its own.
mkdir "$T/u"
"$DEVWLD" --listen "$T/u/listen.sock" --control "$T/u/control.sock" --no-audit \
	--metrics "unix:$T/u/metrics.sock" 2>>"$T/devwld-u.log" &
CHILD_PIDS+=($!)

# get URL-PATH [unix-socket]: the HTTP answer's status line and body, as a scraper sees it.
get() {
	python3 - "$port" "$1" "${2:-}" <<'PY'
import socket, sys
port, path, unix = int(sys.argv[1]), sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_UNIX) if unix else socket.socket()
s.settimeout(20)
s.connect(unix if unix else ("127.0.0.1", port))
s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path).encode())
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
head, _, body = data.partition(b"\r\n\r\n")
print(head.split(b"\r\n")[0].decode())
sys.stdout.write(body.decode())
PY
}
# decided SUBTREE DECISION: the opens (open, openat) so decided under SUBTREE, summed over
# the metrics text on stdin.
decided() {
	awk -v t="$1" -v d="$2" '
		index($0, "devwl_decisions_total{subtree=\"" t "\",syscall=\"open") == 1 &&
		index($0, "decision=\"" d "\"}") { n += $NF }
		END { print n + 0 }'
}

# 1. Decisions move the counters: one allowed, one denied open under /w/a.
"$RUN" --connect "$T/listen.sock" --node /w/a --id m1 -- "$PROBE" open /dev/null rdwr \
	>"$T/out" 2>"$T/err" || fail "devwl-run: $(cat "$T/err")"
"$RUN" --connect "$T/listen.sock" --node /w/a --id m2 -- "$PROBE" open /dev/kmsg rdonly \
	>>"$T/out" 2>>"$T/err" || fail "devwl-run: $(cat "$T/err")"
[ "$(awk '{print $1}' "$T/out")" = "$(printf 'ok\nEPERM')" ] ||
	fail "the workloads' answers: $(cat "$T/out")"
get /metrics >"$T/m1"
[ "$(head -1 "$T/m1")" = "HTTP/1.1 200 OK" ] || fail "GET /metrics: $(head -1 "$T/m1")"
tail -n +2 "$T/m1" >"$T/m1.txt"
promtool check metrics <"$T/m1.txt" >"$T/promtool" 2>&1 || fail "promtool: $(cat "$T/promtool")"
deny=$(decided /w/a deny <"$T/m1.txt")
allow=$(decided /w/a allow <"$T/m1.txt")
cont=$(decided /w/a continue <"$T/m1.txt")
[ "$deny" -ge 1 ] || fail "no denied open under /w/a counted: $(grep decisions "$T/m1.txt")"
# Granted: the kernel opens it (CONTINUE) or devwld does on the caller's behalf (allow).
[ $((allow + cont)) -ge 1 ] || fail "no granted open under /w/a counted"
grep -q '^devwl_handling_seconds_count [1-9]' "$T/m1.txt" || fail "no handling times"
pass "decisions by subtree, syscall and decision; promtool: $(tr '\n' ' ' <"$T/promtool")"

# devwlctl metrics prints the same exposition (one more decision may have happened).
ctl metrics >"$T/ctl.txt" || fail "devwlctl metrics"
promtool check metrics <"$T/ctl.txt" >/dev/null 2>&1 || fail "devwlctl metrics: promtool refuses it"
[ "$(decided /w/a deny <"$T/ctl.txt")" -ge "$deny" ] || fail "devwlctl metrics: counters went back"
"$RUN" --connect "$T/listen.sock" --node /w/a --id m3 -- "$PROBE" open /dev/kmsg rdonly \
	>/dev/null 2>&1 || true
[ "$(ctl metrics | decided /w/a deny)" -gt "$deny" ] || fail "a new denial did not move the counter"
pass "devwlctl metrics: the same exposition; a denial moves its counter"

# The unix socket serves the same (root's: 0600).
for _ in $(seq 100); do [ -S "$T/u/metrics.sock" ] && break; sleep 0.1; done
[ "$(stat -c %a "$T/u/metrics.sock")" = 600 ] || fail "unix metrics socket mode $(stat -c %a "$T/u/metrics.sock")"
get /metrics "$T/u/metrics.sock" >"$T/mu"
[ "$(head -1 "$T/mu")" = "HTTP/1.1 200 OK" ] || fail "unix GET: $(head -1 "$T/mu")"
tail -n +2 "$T/mu" | promtool check metrics >/dev/null 2>&1 || fail "unix: promtool refuses it"
pass "--metrics unix:PATH serves it too, root's alone"

# 2. Other paths and methods, a request too big, garbage.
[ "$(get /other | head -1)" = "HTTP/1.1 404 Not Found" ] || fail "GET /other"
python3 - "$port" >"$T/hostile" <<'PY'
import socket, sys
port = int(sys.argv[1])
def ask(data):
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    try:
        s.sendall(data)
    except OSError:
        pass
    out = b""
    try:
        while True:
            b = s.recv(4096)
            if not b:
                break
            out += b
    except OSError:
        pass
    return out.split(b"\r\n")[0].decode(errors="replace")
print(ask(b"POST /metrics HTTP/1.1\r\n\r\n"))
print(ask(b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 100000))
print(ask(b"\x00\x01\x02garbage\xff\r\n\r\n"))
PY
[ "$(cat "$T/hostile")" = "$(printf '%s\n' 'HTTP/1.1 405 Method Not Allowed' \
	'HTTP/1.1 431 Request Header Fields Too Large' 'HTTP/1.1 400 Bad Request')" ] ||
	fail "hostile requests answered: $(tr '\n' '|' <"$T/hostile")"
pass "404 for another path, 405 for another method, 431 past 4 KiB, 400 for garbage"

# 3. Slowloris: more connections than devwld takes, each dribbling a byte a second and
# never ending its request. Containers are served meanwhile, and once the deadline has
# passed a scrape gets its answer.
python3 - "$port" <<'PY' &
import socket, sys, time
port = int(sys.argv[1])
conns = []
for _ in range(40):
    try:
        conns.append(socket.create_connection(("127.0.0.1", port), timeout=5))
    except OSError:
        pass
end = time.time() + 8
while time.time() < end:
    for c in conns:
        try:
            c.send(b"G")
        except OSError:
            pass
    time.sleep(1)
PY
loris=$!
CHILD_PIDS+=("$loris")
sleep 1
out=$(timeout 30 "$RUN" --connect "$T/listen.sock" --node /w/a --id m4 -- "$PROBE" open /dev/kmsg rdonly \
	2>"$T/err") || fail "a workload while the metrics port is flooded: $(cat "$T/err")"
[ "$out" = EPERM ] || fail "a workload while the metrics port is flooded got: $out"
wait "$loris" 2>/dev/null || true
[ "$(get /metrics | head -1)" = "HTTP/1.1 200 OK" ] || fail "no scrape after the slow clients"
grep -q 'cannot watch the metrics' "$T/devwld.log" && fail "devwld gave up the metrics socket"
kill -0 "$DEVWLD_PID" || fail "devwld died"
pass "40 slow clients: containers still served, a scrape answered once they are cut off"

# 4. A bad --metrics is refused at start, naming it.
for bad in "localhost:9" "127.0.0.1" "unix:relative" "1.2.3.4:99999"; do
	timeout 20 "$DEVWLD" --listen "$T/x.sock" --control "$T/y.sock" --metrics "$bad" \
		2>"$T/bad" && fail "--metrics $bad accepted"
	grep -q -- "--metrics $bad" "$T/bad" || fail "--metrics $bad: $(cat "$T/bad")"
done
pass "a bad --metrics is refused at start, named"
