# Container ids per owner (devwld(8) USERS): a container is its runtime's uid and its id,
# so a user of --allow-uid that attaches first under the id root's container will use
# does not lock that container out; devwlctl containers shows whose each one is, and a
# restart keeps both.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
PROBE=$BUILD/tests/live/probe
[ -x "$RUN" ] && [ -x "$PROBE" ] || fail "devwl-run or the live probe not built (the build should have made it)"
command -v setpriv >/dev/null || skip "no setpriv"
# What uid 65534 runs must be in its reach (a 0700 checkout's build tree is not).
RUN=$(for_others "$RUN") && PROBE=$(for_others "$PROBE") || exit 1
mknod -m 666 "$T/zero" c 1 5 && mknod -m 666 "$T/mem" c 1 1 || skip "cannot mknod in $T"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/containers", "rules": ["allow a"] } ] }
JSON
start_devwld --allow-uid 65534 --state "$T/state.json"

# hold UID-RUNNER ID: a devwl-run --connect workload that opens zero, says UP, and waits
# for $T/go-ID, then opens zero and mem; its output in $T/ID-RUNNER.out.
hold() {
	local who=$1 id=$2
	shift 2
	"$@" "$RUN" --connect "$T/listen.sock" --id "$id" -- sh -c '
		"$1" open "$2/zero" rdonly && echo UP
		while [ ! -e "$2/go-$3" ]; do sleep 0.1; done
		"$1" open "$2/zero" rdonly ";" open "$2/mem" rdonly' sh "$PROBE" "$T" "$who" \
		>"$T/$id-$who.out" 2>&1 &
	CHILD_PIDS+=("$!")
	eval "PID_$who=\$!"
}

# The user attaches first, under the id root's container is about to use.
hold nobody web as_nobody
wait_for "$T/web-nobody.out" UP 30 || fail "uid 65534's web: $(cat "$T/web-nobody.out")"
hold root web
wait_for "$T/web-root.out" UP 30 || fail "root's web was locked out: $(cat "$T/web-root.out"; grep web "$T/devwld.log")"
pass "root's container web attaches although uid 65534 attached one of that id first"

list=$(ctl containers)
echo "$list" | grep -q "^web /users/65534/web 1 .* 65534 -$" &&
	echo "$list" | grep -q "^web /containers/web 1 .* 0 -$" ||
	fail "devwlctl containers: $list"
pass "devwlctl containers lists both, each with its owner: $(echo "$list" | tr '\n' ';')"

ctl restart >/dev/null || fail "devwlctl restart"
list=$(ctl containers)
echo "$list" | grep -q "^web /users/65534/web 1 .* 65534 -$" &&
	echo "$list" | grep -q "^web /containers/web 1 .* 0 -$" ||
	fail "after a restart: $list"
jq -e '[.containers[] | select(.id == "web") | .owner_uid] | sort == [0, 65534]' \
	"$T/state.json" >/dev/null || fail "owners not in the state: $(jq -c .containers "$T/state.json")"
pass "a restart keeps both (the state file records each one's owner)"

# Each is served on its own node: root's gets mem (allow a), the user's only zero.
touch "$T/go-root" "$T/go-nobody"
wait "$PID_root" && wait "$PID_nobody" || true
# mem: granted to root's (ok, or the driver's own answer, ENXIO here), EPERM to the user's.
[ "$(grep -c '^ok' "$T/web-root.out")" -ge 2 ] && [ "$(tail -1 "$T/web-root.out")" != EPERM ] ||
	fail "root's web: $(cat "$T/web-root.out")"
[ "$(grep -c '^ok' "$T/web-nobody.out")" = 2 ] && [ "$(tail -1 "$T/web-nobody.out")" = EPERM ] ||
	fail "uid 65534's web: $(cat "$T/web-nobody.out")"
pass "each is served on its own node: root's is granted /dev/mem, uid 65534's is denied it"
exit 0
