#!/bin/bash
# Acting as the caller takes its supplementary groups, not devwl-run's: devwl-run holds a
# group G (setpriv --groups), the command runs as uid 65534 without G, and a 0660 root:G
# node and a 0770 root:G directory stay closed to it in every mode (authoritative,
# kernel, --no-baseline): a mknod in the directory, which devwl makes on the caller's
# behalf, with the caller's groups (without a baseline refused even with G: made only on
# nodev mounts then), the reopen of the node through /proc/self/fd and a plain open. With
# G the same calls work, so the refusals are the groups' doing. Likewise capabilities: root of a user namespace
# of its own (uid 65534, unshare -Ur) holds every capability there and none over devwl's
# objects, so a 0600 root:root node stays closed to it, and a mknod devwl makes for it in
# a 0755 root:root directory is refused (CAP_DAC_OVERRIDE not carried into devwl's).
# And the caller's Landlock domain: where devwl-run has programmed the caller's cgroup
# (root, authoritative or kernel mode) a granted device is opened by the kernel in the
# caller's own context (doc/DESIGN.md 4.3), so a domain refusing file opens refuses it;
# opened on devwl's behalf it would not.
set -u
. "$(dirname "$0")/lib.sh"
live_init "mknod, setpriv, device cgroup baseline"
command -v setpriv >/dev/null || skip "no setpriv"
G=4242 H=4243
PROBE=$(for_others "$PROBE") || exit 1
chmod 755 "$T"
mknod -m 660 "$T/g0" c 1 5 && chown root:$G "$T/g0" || skip "cannot mknod in $T"
mkdir -m 770 "$T/gdir" && chown root:$G "$T/gdir" || fail "mkdir $T/gdir"
# The waiver lets uid 65534, without CAP_MKNOD, have the node made, by permissions alone.
cat >"$T/policy.json" <<'JSON'
{ "version": 1,
  "nodes": [ { "path": "/g", "rules": ["deny a", "allow c 1:5 rwm"], "mknod_needs_cap": false } ] }
JSON
for mode in --mode=authoritative --mode=kernel --no-baseline; do
	for grp in $H $G; do
		n=$T/gdir/n$grp${mode#--}
		out=$(setpriv --groups $G "$RUN" $mode --policy "$T/policy.json" --node /g -- \
			setpriv --reuid 65534 --regid 65534 --groups $grp "$PROBE" \
			open "$T/g0" path ';' open /proc/self/fd/%L rdonly ';' \
			mknod "$n" c 1 5 0600 ';' open "$T/g0" rdonly 2>"$T/err")
		rc=$?
		[ $rc = 0 ] || fail "$mode, groups $grp: exited $rc: $(cat "$T/err")"
		mapfile -t l <<<"$out"
		[[ "${l[0]}" == "ok fd="* ]] || fail "$mode, groups $grp: O_PATH open: $out"
		if [ $grp = $H ]; then
			[ "${l[1]}" = EACCES ] ||
				fail "$mode: the reopen without G got '${l[1]}': devwl kept its own groups? $out"
			[ "${l[2]}" = EACCES ] && [ ! -e "$n" ] ||
				fail "$mode: the mknod without G got '${l[2]}': devwl kept its own groups? $out"
			[ "${l[3]}" = EACCES ] || fail "$mode: the open without G got '${l[3]}': $out"
		else
			[[ "${l[1]}" == "ok fd="*" rdev=1:5 "* ]] || fail "$mode: the reopen with G: $out"
			if [ "$mode" = --no-baseline ]; then
				# No device cgroup behind the caller: devwl makes a device node only on a
				# nodev mount (doc/DESIGN.md, "mknod"), so with G it is still refused.
				[ "${l[2]}" = EPERM ] && [ ! -e "$n" ] ||
					fail "$mode: the mknod with G, no baseline: $out"
			else
				[ "${l[2]}" = ok ] && [ "$(stat -c %u:%t:%T "$n")" = 65534:1:5 ] ||
					fail "$mode: the mknod with G: $out"
			fi
			[[ "${l[3]}" == "ok fd="*" rdev=1:5 "* ]] || fail "$mode: the open with G: $out"
		fi
	done
	echo "ok - $mode: a caller without devwl-run's group $G is refused its node and directory"
done
mknod -m 600 "$T/root0" c 1 5 || fail "mknod $T/root0"
mkdir -m 755 "$T/rootdir" || fail "mkdir $T/rootdir"
if setpriv --reuid 65534 --regid 65534 --clear-groups unshare -Ur true 2>/dev/null; then
	for mode in --mode=authoritative --mode=kernel --no-baseline; do
		out=$("$RUN" $mode --policy "$T/policy.json" --node /g -- \
			setpriv --reuid 65534 --regid 65534 --clear-groups unshare -Ur "$PROBE" \
			open "$T/root0" path ';' open /proc/self/fd/%L rdonly ';' \
			open "$T/root0" rdonly ';' mknod "$T/rootdir/u${mode#--}" c 1 5 0600 2>"$T/err")
		mapfile -t l <<<"$out"
		[[ "${l[0]}" == "ok fd="* ]] || fail "$mode, user namespace: O_PATH open: $out $(cat "$T/err")"
		[ "${l[1]}" = EACCES ] && [ "${l[2]}" = EACCES ] ||
			fail "$mode: root of a user namespace opened a 0600 root node: devwl carried its capabilities? $out"
		[ "${l[3]}" = EACCES ] && [ ! -e "$T/rootdir/u${mode#--}" ] ||
			fail "$mode: a node made for root of a user namespace in a 0755 root directory: devwl carried its capabilities? $out"
	done
	echo "ok - root of a user namespace is refused a 0600 root node and a root directory in every mode"
else
	echo "# not checked here: uid 65534 cannot make a user namespace (the host's setting)"
fi
if [ "$("$PROBE" landlock /usr)" = ok ]; then
	for mode in --mode=authoritative --mode=kernel; do
		out=$("$RUN" $mode --policy "$T/policy.json" --node /g -- "$PROBE" landlock /usr ';' \
			open "$T/g0" path ';' open /proc/self/fd/%L rdonly ';' open "$T/g0" rdonly 2>"$T/err")
		mapfile -t l <<<"$out"
		[ "${l[0]}" = ok ] && [[ "${l[1]}" == "ok fd="* ]] ||
			fail "$mode, Landlock: $out $(cat "$T/err")"
		[ "${l[2]}" = EACCES ] && [ "${l[3]}" = EACCES ] ||
			fail "$mode: a granted device opened outside the caller's Landlock domain: $out"
	done
	echo "ok - a granted device is opened in the caller's own context: its Landlock domain holds"
else
	echo "# not checked here: no Landlock on this kernel"
fi
echo "PASS"
