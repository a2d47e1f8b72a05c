# A rootless image build served by devwld: the build of tests/live/82 (uid 65534, buildah
# on fuse-overlayfs in its user namespace; tests/rootless-build.sh) handed to devwld with
# devwl-run --connect, with the full profile (every open trapped, devwld decides) and the
# mknod-only one (--mode=kernel: devwld programs the run's device cgroup). On a node that
# grants /dev/fuse it builds, its RUN reading the COPY'd file from a fuse-overlayfs root,
# and devwld refuses nothing; on a node that does not, it fails at once, fuse-overlayfs
# saying it cannot open /dev/fuse, and devwld's audit has the refusal (full profile).
# RB_TOOL=podman runs the same with `podman build` (tests/oci/198).
RT=
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/../rootless-build.sh"
RUN=${DEVWL_RUN:-$BUILD/tools/devwl-run}
[ -x "$RUN" ] || fail "devwl-run not built (the build should have made it)"
tool=${RB_TOOL:-buildah}
why=$(rb_missing "$tool")
[ -z "$why" ] || skip "$why"
trap 's=$?; rb_restore; (exit $s); cleanup' EXIT
rb_setup "$T/b" 3000000000 "$tool" || fail "setting up the build in $T/b"

cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/fuse", "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm",
                                          "allow c 1:8 rwm", "allow c 1:9 rwm",
                                          "allow c 5:0 rwm", "allow c 10:229 rwm"] },
             { "path": "/nofuse", "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm",
                                            "allow c 1:8 rwm", "allow c 1:9 rwm",
                                            "allow c 5:0 rwm"] } ] }
JSON
start_devwld

# build PROFILE NODE ID: the build handed to devwld on NODE; output in $T/ID.out.
build() {
	local mode=()
	[ "$1" = kernel ] && mode=(--mode=kernel)
	rb_build "$T/$3.out" "$RUN" --connect "$T/listen.sock" --node "$2" --id "$3" "${mode[@]}" --
}

for how in full kernel; do
	start=$SECONDS
	build $how /fuse b-$how || fail "$how: the build failed ($?): $(tail -20 "$T/b-$how.out")"
	out=$T/b-$how.out
	grep -qx devwl-build "$out" && grep -qx 'root: fuse.fuse-overlayfs' "$out" &&
		grep -q '^Successfully tagged localhost/devwl-build:latest$' "$out" ||
		fail "$how: the RUN did not read the COPY'd file from fuse-overlayfs: $(cat "$out")"
	pass "$how profile: rootless $tool build (COPY, RUN on fuse-overlayfs) in $((SECONDS - start)) s"
done
# An error devwld answers is the kernel's own (openat2 feature probes: EINVAL); a
# refusal, or a call it could not decide, is EPERM.
refused=$(grep '"decision":"deny"\|"errno":"EPERM"' "$T/audit.jsonl" | head -5)
[ -z "$refused" ] || fail "devwld refused something in the builds: $refused"
grep '"path":"/dev/fuse"' "$T/audit.jsonl" | grep '"device":"c 10:229"' | grep -q '"decision":"allow"' ||
	fail "full profile: no granted open of /dev/fuse in devwld's audit"
pass "devwld refused nothing, and granted /dev/fuse"

for how in full kernel; do
	start=$SECONDS
	build $how /nofuse n-$how
	rc=$?
	[ $rc = 124 ] && fail "$how without the grant: the build hung: $(tail -5 "$T/n-$how.out")"
	[ $rc = 0 ] && fail "$how without the grant: the build succeeded"
	grep -q 'failed to open /dev/fuse: Operation not permitted' "$T/n-$how.out" ||
		fail "$how without the grant: not refused as /dev/fuse: $(tail -5 "$T/n-$how.out")"
	pass "$how profile without /dev/fuse: the build fails in $((SECONDS - start)) s, fuse-overlayfs cannot open /dev/fuse"
done
grep '"path":"/dev/fuse"' "$T/audit.jsonl" | grep '"device":"c 10:229"' |
	grep -q '"decision":"deny".*"reason":"policy"' ||
	fail "full profile without the grant: the refusal of /dev/fuse not audited: $(grep /dev/fuse "$T/audit.jsonl")"
exit 0
