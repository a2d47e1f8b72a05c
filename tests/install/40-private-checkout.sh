#!/bin/bash
# The suite passes from a private checkout: a clone of the repository in a 0700
# directory, with this build's programs copied into its build tree where a build there
# would make them (building again would take minutes), and the live tests that run
# something as uid 65534 run from it (live-02-mknod, live-52-run-unprivileged). A test
# that runs a program as another user must copy it where that user can reach it, or
# fail saying why; uid 65534 cannot reach anything under the 0700 directory.
set -uo pipefail

skip() {
	echo "SKIP: $*" >&2
	exit 77
}
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
src=${DEVWL_SOURCE:?} build=${DEVWL_BUILD:?}
[ "$(id -u)" = 0 ] || skip "needs root (the live tests it runs)"
for cmd in git setpriv; do
	command -v $cmd >/dev/null || skip "$cmd not installed"
done
git -C "$src" rev-parse --git-dir >/dev/null 2>&1 || skip "$src is not a git checkout"
P=$(mktemp -d /tmp/devwl-private.XXXXXX)
trap 'rm -rf "$P"' EXIT
chmod 700 "$P"
git clone -q "$src" "$P/src" || fail "git clone $src"
# The tests as they are in the source tree, uncommitted changes too.
git -C "$src" diff --name-only -z HEAD -- tests | tar -C "$src" --null -T - -cf - |
	tar -C "$P/src" -xf - || fail "copying the changed tests"
B=$P/src/build
progs=(tools/devwl-run tests/host-probe tests/live/probe tests/live/02-mknod)
for f in "${progs[@]}"; do
	[ -x "$build/$f" ] || fail "$build/$f: the build should have made it"
	mkdir -p "$(dirname "$B/$f")" && cp -p "$build/$f" "$B/$f" || fail "copying $f"
done
# The point: the tree is out of uid 65534's reach.
if setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$B/tools/devwl-run"; then
	fail "uid 65534 can run $B/tools/devwl-run: the checkout is not private"
fi
export DEVWL_BUILD=$B DEVWL_LIVE_BIN=$B/tests/live DEVWL_SOURCE=$P/src
for t in "$B/tests/live/02-mknod" "bash $P/src/tests/live/52-run-unprivileged.sh"; do
	$t >"$P/out" 2>&1
	rc=$?
	name=$(basename "${t##* }")
	sed "s/^/  $name: /" "$P/out"
	case $rc in
	0) echo "ok - $name from a 0700 checkout" ;;
	77) skip "$name skipped: $(sed -n 's/^.*SKIP: //p' "$P/out" | head -1)" ;;
	*) fail "$name from a 0700 checkout exited $rc" ;;
	esac
done
echo "PASS"
