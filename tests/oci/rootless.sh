# A real runtime run by an unprivileged user (uid 65534, HOME and run state under $T)
# against a root devwld with --allow-uid 65534 (devwld(8) USERS), as
# examples/rootless/README.md sets it up: the full profile pointing at devwld with no
# node= of its own, a policy for /users/65534. Sourced by bash after lib.sh with RT set:
# runc or crun (a rootless spec the runtime writes itself, run with --root), or podman
# (rootless podman on the same root file system, --rootfs, with the runtime PM_RT
# names: runc, or crun through the guide's wrapper on a hybrid host). The test calls
# rootless_setup, then rootless_workload; bench/rootless.sh sources it too, for
# rootless_setup and rootless_bundle.

command -v setpriv >/dev/null || skip "no setpriv"
as_nobody unshare -Urm true 2>/dev/null || skip "uid 65534 cannot make user namespaces here"
chmod 755 "$T"

# The user's home, its runtime's state, the directory the container reports into.
U=$T/user
W=$T/w
mkdir -p "$U/run" "$W"
chmod 700 "$U/run"
chown -R 65534:65534 "$U"
chmod 777 "$W"

# crun 1.8.1 refuses a hybrid host (cgroup v1 plus a cgroup2 mount with a controller):
# as the guide says, it runs in a user and mount namespace of the user's own where a
# tmpfs hides each cgroup2 mount. Its spec is written there too, so the container's
# uid map names the user as that namespace sees it (0). Under podman, crun is the
# guide's bin/crun-hybrid, which hides /sys/fs/cgroup/unified.
HIDE_CG2=
if [ "$RT" != runc ] && [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ]; then
	HIDE_CG2=$(awk '$0 ~ / - cgroup2 / {printf "%s ", $5}' /proc/self/mountinfo)
fi
if [ "$RT" = podman ]; then
	for cmd in runc crun; do
		command -v $cmd >/dev/null || skip "$cmd not installed (podman runs runc and crun here)"
	done
	[ -z "$HIDE_CG2" ] || [ "$HIDE_CG2" = "/sys/fs/cgroup/unified " ] ||
		skip "cgroup2 mounted at $HIDE_CG2: the guide's crun-hybrid hides /sys/fs/cgroup/unified only"
fi

# as_user CMD...: CMD as uid 65534 with its own HOME and XDG_RUNTIME_DIR.
as_user() {
	as_nobody env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$U" XDG_RUNTIME_DIR="$U/run" "$@"
}

# rt_user ARGS...: the runtime as the user, its state in $U/state.
rt_user() {
	if [ -n "$HIDE_CG2" ]; then
		as_user timeout 120 unshare -Urm sh -c 'for m in '"$HIDE_CG2"'; do
			mount -t tmpfs none "$m" || exit 125; done; exec crun --root "$HOME/state" "$@"' \
			sh "$@"
	else
		as_user timeout 120 "$RT" --root "$U/state" "$@"
	fi
}

# pm_user ARGS...: podman as the user, its runtime PM_RT (crun through the guide's
# wrapper, $U/bin/crun-hybrid, on a hybrid host).
pm_user() {
	local rt=$PM_RT
	[ "$rt" = crun ] && [ -n "$HIDE_CG2" ] && rt=$U/bin/crun-hybrid
	as_user timeout 120 podman --runtime "$rt" --cgroup-manager=cgroupfs --events-backend none "$@"
}

RL_IDS=()
rootless_cleanup() {
	local st=$? id pid
	if [ "$RT" = podman ]; then
		as_user timeout 60 podman rm -af -t 0 >/dev/null 2>&1
		pid=$(cat "$U/run/libpod/tmp/pause.pid" 2>/dev/null) && kill "$pid" 2>/dev/null
		RL_IDS=()
	fi
	for id in "${RL_IDS[@]}"; do
		rt_user kill "$id" KILL >/dev/null 2>&1
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			rt_user delete -f "$id" >/dev/null 2>&1 && break
			sleep 0.2
		done
	done
	(exit "$st")
	cleanup
}
trap rootless_cleanup EXIT

# rootless_setup: devwld with --allow-uid 65534 and the policy of the guide, the busybox
# rootfs owned by the user, the fuse node; the guide's podman profile pointing at devwld.
# For runc and crun the bundle $T/b (the runtime's rootless spec with that profile, the
# workload script /w/work.sh as its process) and $T/kprofile.json; for podman PM_OPTS,
# the same container as `podman run` options, and the guide's crun wrapper.
rootless_setup() {
	cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [
    { "path": "/users",
      "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rw", "allow c 1:9 rw", "allow c 10:229 rw",
                "allow b 7:* rw"] },
    { "path": "/users/65534", "mknod_needs_cap": false,
      "rules": ["deny a", "allow c 1:3 rwm", "allow c 1:5 rwm", "allow c 1:8 rw", "allow c 1:9 rw", "allow c 10:229 rw",
                "allow b 7:* rw"] } ],
  "containers": { "container_rules": ["deny b 7:* rwm"] } }
JSON
	start_devwld --allow-uid 65534 --state "$T/state.json"
	make_rootfs
	mkdir -p "$T/rootfs/mnt" "$T/rootfs/w" "$T/rootfs/usr" "$T/rootfs/lib" "$T/rootfs/lib64"
	chmod 1777 "$T/rootfs/tmp"
	chown -R 65534:65534 "$T/rootfs"
	# FUSE: a node the kernel opens for the user (the host's /dev/fuse may be 0600), an
	# ext2 image (made for each container) with fuse2fs to mount it (the host's /usr and
	# /lib, read-only).
	FUSE=1
	if ! command -v fuse2fs >/dev/null || ! command -v mke2fs >/dev/null || [ ! -c /dev/fuse ]; then
		FUSE=
		echo "# no fuse2fs, mke2fs or /dev/fuse here: the FUSE part is left out"
	else
		mknod -m 666 "$T/fuse" c 10 229 && touch "$T/img" && chown 65534:65534 "$T/img" ||
			fail "the FUSE node"
	fi
	jq --arg lp "$T/listen.sock" '.listenerPath = $lp' \
		"$HERE/../../examples/oci-hook/podman-profile.json" >"$T/profile.json" || fail "jq on the profile"
	chmod 644 "$T/profile.json"

	if [ "$RT" = podman ]; then
		# The guide's wrapper, as section 4 writes it.
		mkdir -p "$U/bin"
		awk '$0 == "mkdir -p bin && cat > bin/crun-hybrid <<'"'EOF'"'" {f = 1; next}
			/^EOF$/ {f = 0} f' "$HERE/../../examples/rootless/README.md" >"$U/bin/crun-hybrid"
		grep -q 'exec crun' "$U/bin/crun-hybrid" || fail "no crun-hybrid in examples/rootless/README.md"
		chmod 755 "$U/bin/crun-hybrid"
		chown -R 65534:65534 "$U/bin"
		PM_OPTS=(--network none --security-opt "seccomp=$T/profile.json" -v "$W:/w" --env PATH=/bin)
		[ -n "$FUSE" ] && PM_OPTS+=(--cap-add SYS_ADMIN --cap-add SYS_CHROOT -v /usr:/usr:ro -v /lib:/lib:ro
			-v "$T/img:/img" -v "$T/fuse:/dev/fuse")
		[ -n "$FUSE" ] && [ -d /lib64 ] && PM_OPTS+=(-v /lib64:/lib64:ro)
		return 0
	fi

	mkdir -p "$T/b"
	chown 65534:65534 "$T/b"
	if [ -n "$HIDE_CG2" ]; then
		(cd "$T/b" && as_user unshare -Urm crun spec --rootless) || fail "crun spec --rootless"
	else
		(cd "$T/b" && as_user "$RT" spec --rootless) || fail "$RT spec --rootless"
	fi
	jq --arg root "$T/rootfs" --arg w "$W" --arg T "$T" --argjson fuse "${FUSE:-0}" \
		--slurpfile sc "$T/profile.json" '
		.root = {path: $root, readonly: false}
		| .process.terminal = false
		| .process.args = ["/bin/sh", "/w/work.sh"]
		| .process.env = ["PATH=/bin", "TERM=xterm"]
		| .linux.seccomp = $sc[0]
		| .mounts += [{destination: "/w", type: "bind", source: $w, options: ["rbind"]}]
		| if $fuse == 1 then
			.process.capabilities |= with_entries(.value += ["CAP_SYS_ADMIN", "CAP_SYS_CHROOT"])
			| .mounts += [{destination: "/usr", type: "bind", source: "/usr", options: ["rbind", "ro"]},
				{destination: "/lib", type: "bind", source: "/lib", options: ["rbind", "ro"]},
				{destination: "/img", type: "bind", source: ($T + "/img"), options: ["bind"]},
				{destination: "/dev/fuse", type: "bind", source: ($T + "/fuse"), options: ["bind"]}]
		  else . end' "$T/b/config.json" >"$T/b/config.new" || fail "jq on the spec"
	[ -d /lib64 ] && jq '.mounts += [{destination: "/lib64", type: "bind", source: "/lib64",
		options: ["rbind", "ro"]}]' "$T/b/config.new" >"$T/b/config.json" ||
		mv "$T/b/config.new" "$T/b/config.json"
	rm -f "$T/b/config.new"
	chown 65534:65534 "$T/b/config.json"
	jq --arg lp "$T/listen.sock" '.listenerPath = $lp | .listenerMetadata = "mode=kernel"' \
		"$HERE/../../examples/oci-hook/seccomp-mknod-only.json" >"$T/kprofile.json" ||
		fail "jq on the mknod-only profile"
}

# rootless_bundle DIR FILTER: a bundle at DIR, the user's, whose spec is $T/b's through
# the jq FILTER ($kp[0]: the mknod-only profile with mode=kernel).
rootless_bundle() {
	mkdir -p "$1" &&
		jq --slurpfile kp "$T/kprofile.json" "$2" "$T/b/config.json" >"$1/config.json" ||
		fail "jq on the spec of $1"
	chown -R 65534:65534 "$1"
}

# rl_run NAME: container NAME run to its end, in the foreground (podman: --rm, its id
# written to $U/NAME.cid).
rl_run() {
	if [ "$RT" = podman ]; then
		pm_user run --rm --cidfile "$U/$1.cid" --name "$1" "${PM_OPTS[@]}" \
			--rootfs "$T/rootfs" /bin/sh /w/work.sh
	else
		rt_user run --bundle "$T/b" "$1"
	fi
}

# rl_id NAME: the OCI id of container NAME, which devwld knows it by: NAME itself, or
# podman's id once it has one.
rl_id() {
	[ "$RT" = podman ] || {
		echo "$1"
		return 0
	}
	for _ in $(seq 1200); do
		[ -s "$U/$1.cid" ] && cat "$U/$1.cid" && return 0
		kill -0 "$RL_PID" 2>/dev/null || break
		sleep 0.05
	done
	fail "podman never wrote an id for $1: $(cat "$T/run.out")"
}

# The workload, in steps the test releases through $W: deny, N mknod + open on its
# /dev (the tmpfs of its user namespace: nodev), the N again after a restart, an
# attached disk, a FUSE mount of its own.
N=100
rootless_script() {
	cat <<SH
{ echo x >/dev/null && echo NULL_OK
  echo x >/dev/full || echo FULL_REFUSED
  mknod /dev/kmsg c 1 11; echo KMSG_RC=\$?
  mknod /tmp/zero c 1 5; echo TMPNOD_RC=\$?; } >/w/deny 2>&1
ok=0
for i in \$(seq $N); do mknod /dev/n\$i c 1 5 && true </dev/n\$i && ok=\$((ok + 1)); done 2>>/w/errs
echo \$ok >/w/made.new && mv /w/made.new /w/made
while [ ! -e /w/go ]; do sleep 0.05; done
ok=0
for i in \$(seq $N); do true </dev/n\$i && ok=\$((ok + 1)); done 2>>/w/errs
echo \$ok >/w/again.new && mv /w/again.new /w/again
while [ ! -e /w/go2 ]; do sleep 0.05; done
{ head -c 9 /dev/xdisk; echo; } >/w/att 2>&1
if [ -e /img ]; then
	{ /usr/bin/fuse2fs -o fakeroot /img /mnt || exit 3
	  grep -c ' /mnt fuse' /proc/self/mounts
	  echo devwl-fuse >/mnt/f && cat /mnt/f && mkdir /mnt/bin && cp /bin/busybox /mnt/bin/ &&
		chroot /mnt /bin/busybox cat /f
	  true </dev/null && echo NULL_AGAIN
	  cat /mnt/nothere; umount /mnt; } >/w/fuse.new 2>&1
	mv /w/fuse.new /w/fuse
fi
SH
}

# await FILE: until the container wrote FILE (60 s, while its runtime runs: RL_PID, when
# one is in the foreground), else fail.
await() {
	for _ in $(seq 1200); do
		[ -e "$W/$1" ] && return 0
		[ -z "${RL_PID:-}" ] || kill -0 "$RL_PID" 2>/dev/null || break
		sleep 0.05
	done
	fail "the container never wrote $1: $(cat "$T/run.out" "$W/errs" 2>/dev/null | tail -5)"
}

# rootless_workload NAME: container NAME run to its end, each step checked; the test may
# run several, one after another (RL_GEN counts devwld's workers).
RL_GEN=1
rootless_workload() {
	local name=$1 id who=$RT made opened a
	if [ "$RT" = podman ]; then
		who="podman --runtime $PM_RT"
		[ "$PM_RT" = crun ] && [ -n "$HIDE_CG2" ] && who="podman --runtime crun-hybrid"
	fi
	rm -f "$W"/*
	rootless_script >"$W/work.sh"
	if [ -n "$FUSE" ]; then
		mke2fs -q -F -t ext2 "$T/img" 8M >/dev/null 2>&1 || fail "mke2fs $T/img"
	fi
	RL_IDS+=("$name")
	rl_run "$name" >"$T/run.out" 2>&1 </dev/null &
	RL_PID=$!
	CHILD_PIDS+=($!)
	id=$(rl_id "$name") || exit 1
	await made
	grep -qx NULL_OK "$W/deny" && grep -qx FULL_REFUSED "$W/deny" &&
		grep -q "/dev/full: Operation not permitted" "$W/deny" && grep -qx KMSG_RC=1 "$W/deny" &&
		grep -qx TMPNOD_RC=1 "$W/deny" || fail "$who: the first opens: $(cat "$W/deny")"
	# No NAME, not even podman's: runtime names are root's runtimes' alone (devwlctl(1)
	# CONTAINER NAMES), so it is attached by its id.
	ctl containers | grep -q "^$id /users/65534/$id .* 65534 -\$" ||
		fail "$who: devwlctl containers: $(ctl containers)"
	audit_reason "$id" openat "c 1:7" policy && audit_reason "$id" mknodat "c 1:11" policy &&
		audit_reason "$id" mknodat "c 1:5" "a node is made only on a nodev mount" ||
		fail "$who: the denials' records: $(grep '"deny"' "$T/audit.jsonl")"
	pass "$who as uid 65534: /users/65534/$id, owner 65534, no NAME; /dev/full, mknod c 1:11 and a node on its rootfs refused EPERM, each with its reason"

	made=$(cat "$W/made")
	[ "$made" = $N ] || fail "$who: $made of $N granted mknod + open on its nodev /dev: $(sort "$W/errs" | uniq -c | head)"
	pass "$who: $N of $N granted nodes made on its nodev /dev and opened (default handler threads)"

	ctl restart >"$T/restart.out" 2>&1 || fail "restart: $(cat "$T/restart.out")"
	RL_GEN=$((RL_GEN + 1))
	wait_for "$T/devwld.log" "worker $RL_GEN ready" || fail "no worker $RL_GEN"
	touch "$W/go"
	await again
	opened=$(cat "$W/again")
	[ "$opened" = $N ] || fail "$who: after devwlctl restart $opened of $N opened: $(sort "$W/errs" | uniq -c | head)"
	pass "$who: after devwlctl restart all $N open again"

	make_loop
	ctl attach --owner 65534 "$id" "$LOOP" /dev/xdisk >"$T/attach.out" 2>&1 ||
		fail "$who: devwlctl attach: $(cat "$T/attach.out")"
	touch "$W/go2"
	if [ -n "$FUSE" ]; then await fuse; else await att; fi
	a=$(cat "$W/att")
	[ "$a" = DEVWLDISK ] || fail "$who: the attached disk: $a"
	pass "$who: devwlctl attach --owner 65534 ID $LOOP /dev/xdisk, and the container reads it"

	if [ -n "$FUSE" ]; then
		[ "$(head -4 "$W/fuse")" = "$(printf '1\ndevwl-fuse\ndevwl-fuse\nNULL_AGAIN')" ] &&
			grep -q "nothere.*No such file or directory" "$W/fuse" ||
			fail "$who: FUSE: $(cat "$W/fuse")"
		grep '"container":"'"$id"'"' "$T/audit.jsonl" | grep '"path":"/mnt/nothere"' |
			grep '"errno":"ENOENT"' | grep -q '"reason":"looked up as the caller' ||
			fail "$who: the FUSE lookup's record: $(grep nothere "$T/audit.jsonl")"
		pass "$who: a fuse2fs mount of its own under the full profile: written, read, chrooted into; a missing name ENOENT"
	fi
	wait_for "$T/devwld.log" "container $id: gone" || fail "$who: $id never ended: $(cat "$T/run.out")"
}

# audit_reason ID SYSCALL DEVICE REASON: an EPERM record of ID whose reason holds REASON.
audit_reason() {
	jq -e -s --arg id "$1" --arg sc "$2" --arg dev "$3" --arg why "$4" \
		'any(.[]; .container == $id and .syscall == $sc and .device == $dev and
			  .decision == "deny" and .errno == "EPERM" and (.reason // "" | contains($why)))' \
		"$T/audit.jsonl" >/dev/null
}

# rootless_kernel_mode ID: the same bundle with the mknod-only profile (mode=kernel), as
# devwld(8) USERS says: not programmed (its runtime is a user's), so devwld sees no open:
# /dev/full, which the node refuses, opens as the runtime bound it in, and a node devwld
# makes on the nodev /dev never opens.
rootless_kernel_mode() {
	local id=$1
	rootless_bundle "$T/k" '.linux.seccomp = $kp[0] | .process.args = ["/bin/sh", "-c",
		"{ true >/dev/full && echo FULL_OPENED; mknod /dev/z c 1 5 && echo MADE; true </dev/z || echo NOOPEN; } >/w/k 2>&1"]'
	RL_IDS+=("$id")
	rt_user run --bundle "$T/k" "$id" >"$T/k.out" 2>&1 </dev/null
	grep -qx FULL_OPENED "$W/k" && grep -qx MADE "$W/k" && grep -qx NOOPEN "$W/k" &&
		grep -q '/dev/z: Permission denied' "$W/k" || fail "$RT, kernel mode: $(cat "$W/k" "$T/k.out")"
	jq -e -s --arg id "$id" 'any(.[]; .event == "mode" and .container == $id and
		.mode == "unprogrammed" and (.reason | contains("uid 65534")))' "$T/audit.jsonl" >/dev/null ||
		fail "$RT, kernel mode: the mode record: $(grep '"mode"' "$T/audit.jsonl")"
	pass "$RT with mode=kernel: unprogrammed; /dev/full (refused by the node) opens, a node made on its /dev never opens (EACCES)"
}
