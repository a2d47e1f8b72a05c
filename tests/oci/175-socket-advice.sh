# devwlctl's word when it cannot reach devwld (devwlctl(1) EXIT STATUS, tools/ctlmsg.c):
# which socket it tried and where the path came from (--socket, DEVWL_SOCKET, the
# default), and what to do: start devwld or name its socket (ENOENT, ECONNREFUSED), run as
# root (EACCES on the 0600 socket), devwld answers root alone (a world-writable socket, the
# peer closed at once). DEVWL_SOCKET reaches a running devwld; --socket wins over it.
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
command -v setpriv >/dev/null || skip "no setpriv"
CTL=$(for_others "$DEVWLCTL") || exit 1

cat >"$T/policy.json" <<'JSON'
{ "version": 1, "nodes": [ { "path": "/c", "rules": ["deny a", "allow c 1:3 rw"] } ] }
JSON

# --- 1. no devwld: ENOENT names the path, its origin and the way out -------------------
DEVWL_SOCKET=$T/control.sock "$DEVWLCTL" stats >"$T/out" 2>&1 && fail "stats without devwld: $(cat "$T/out")"
grep -q "^devwlctl: cannot reach devwld at $T/control.sock (from DEVWL_SOCKET): ENOENT: is devwld running?" "$T/out" ||
	fail "ENOENT from DEVWL_SOCKET: $(cat "$T/out")"
"$DEVWLCTL" --socket "$T/nowhere.sock" list /c >"$T/out" 2>&1 && fail "list without devwld: $(cat "$T/out")"
grep -q "at $T/nowhere.sock (given with --socket): ENOENT: is devwld running?" "$T/out" ||
	fail "ENOENT from --socket: $(cat "$T/out")"
# The default path, wherever this host's devwld is: devwlctl says how to name another.
if [ ! -e /run/devwl/control.sock ]; then
	env -u DEVWL_SOCKET "$DEVWLCTL" stats >"$T/out" 2>&1 && fail "stats on the default path: $(cat "$T/out")"
	grep -q "at /run/devwl/control.sock (the default; --socket PATH or DEVWL_SOCKET=PATH names another): ENOENT" "$T/out" ||
		fail "ENOENT on the default path: $(cat "$T/out")"
fi
# A socket file nobody accepts on (a devwld killed hard leaves one).
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$T/stale.sock" 2>/dev/null ||
	skip "cannot make a stale socket (python3)"
"$DEVWLCTL" --socket "$T/stale.sock" stats >"$T/out" 2>&1 && fail "stats on a stale socket: $(cat "$T/out")"
grep -q "ECONNREFUSED: is devwld running?" "$T/out" || fail "ECONNREFUSED: $(cat "$T/out")"
pass "no devwld: $(cat "$T/out")"

# --- 2. DEVWL_SOCKET reaches devwld; --socket wins -------------------------------------
start_devwld
[ "$(DEVWL_SOCKET=$T/control.sock "$DEVWLCTL" list /c)" = "c 1:3 rw" ] ||
	fail "list through DEVWL_SOCKET: $(DEVWL_SOCKET=$T/control.sock "$DEVWLCTL" list /c 2>&1)"
DEVWL_SOCKET=$T/nowhere.sock "$DEVWLCTL" --socket "$T/control.sock" list /c >"$T/out" 2>&1 ||
	fail "--socket over DEVWL_SOCKET: $(cat "$T/out")"
DEVWL_SOCKET=$T/control.sock "$DEVWLCTL" events --container nosuch >"$T/out" 2>&1 &&
	fail "events through DEVWL_SOCKET: $(cat "$T/out")"
grep -q 'no container "nosuch"' "$T/out" || fail "events through DEVWL_SOCKET reached no devwld: $(cat "$T/out")"
pass "DEVWL_SOCKET names the socket (list, events); --socket wins over it"

# --- 3. not root: EACCES on the 0600 socket, a closed connection on a 0666 one ---------
chmod 755 "$T"
as_nobody "$CTL" --socket "$T/control.sock" stats >"$T/out" 2>&1 && fail "uid 65534's stats: $(cat "$T/out")"
grep -q "EACCES: the control socket is root's alone: run devwlctl as root" "$T/out" ||
	fail "EACCES: $(cat "$T/out")"
pass "uid 65534 on the 0600 socket: $(cat "$T/out")"
chmod 666 "$T/control.sock"
as_nobody env DEVWL_SOCKET="$T/control.sock" "$CTL" list /c >"$T/out" 2>&1 && fail "uid 65534's list: $(cat "$T/out")"
grep -Eq "(ECONNRESET|EPIPE): devwld closed the connection: it answers root alone" "$T/out" ||
	fail "a refused peer: $(cat "$T/out")"
pass "uid 65534 on a 0666 socket: $(cat "$T/out")"
exit 0
