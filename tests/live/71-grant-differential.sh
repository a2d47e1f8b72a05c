#!/bin/bash
# Differential: a grant gives the device, never more (doc/DESIGN.md, "Grants"). For random
# (device, access asked, access granted, node mode, capabilities kept) tuples, the answer
# a command gets under devwl-run --deny a --allow 'RULE', in authoritative mode, kernel
# mode and without a baseline, equals the kernel's own answer to the same command run
# natively in a v1 devices cgroup that allows exactly RULE: the same capabilities checked
# at open (/dev/kmsg: CAP_SYSLOG under dmesg_restrict), the same file permissions
# (CAP_DAC_OVERRIDE), the same refusals — where both refuse, the errno may differ: devwl
# refuses a denied device EPERM before the kernel looks at the node's permissions, which
# it checks first (EACCES). DEVWL_DIFF_SEED picks the sequence (printed on failure),
# DEVWL_DIFF_N its length.
set -u
. "$(dirname "$0")/lib.sh"
live_init "device nodes, a v1 devices cgroup, setpriv"
command -v setpriv >/dev/null || skip "no setpriv(1)"
V1=$(awk '$9 == "cgroup" && $NF ~ /(^|,)devices(,|$)/ {print $5; exit}' /proc/self/mountinfo)
[ -n "$V1" ] || skip "no cgroup-v1 devices controller mounted: no native reference here"
chmod 755 "$T"
restrict=$(cat /proc/sys/kernel/dmesg_restrict)
CG=$V1$(awk -F: '$2 ~ /(^|,)devices(,|$)/ {print $3}' /proc/self/cgroup)/devwl-diff-$$
CG=${CG//\/\//\/}
trap 'echo "$restrict" >/proc/sys/kernel/dmesg_restrict; rmdir "$CG" 2>/dev/null; rm -rf "$T"' EXIT
echo 1 >/proc/sys/kernel/dmesg_restrict || skip "cannot set kernel.dmesg_restrict"
mkdir "$CG" || fail "mkdir $CG"

devices=("c 1 3" "c 1 5" "c 1 7" "c 1 8" "c 1 11" "c 10 229")
accesses=(rdonly wronly rdwr)
grants=(r w rw rwm m)
modes=(0600 0666 0000 0640)
caps=(syslog dac_override fowner chown)
seed=${DEVWL_DIFF_SEED:-$RANDOM}
n=${DEVWL_DIFF_N:-20}
RANDOM=$seed
for i in $(seq "$n"); do
	read -r t maj min <<<"${devices[RANDOM % ${#devices[@]}]}"
	acc=${accesses[RANDOM % 3]}
	grant=${grants[RANDOM % ${#grants[@]}]}
	mode=${modes[RANDOM % ${#modes[@]}]}
	keep=-all
	for c in "${caps[@]}"; do
		((RANDOM % 2)) && keep="$keep,+$c"
	done
	rule="$t $maj:$min $grant"
	node=$T/n$i
	mknod -m "$mode" "$node" "$t" "$maj" "$min" || fail "mknod $node"
	run="setpriv --bounding-set=$keep --inh-caps=-all -- $PROBE open $node $acc,nonblock"
	echo a >"$CG/devices.deny" && echo "$rule" >"$CG/devices.allow" ||
		fail "programming $CG with $rule"
	# shellcheck disable=SC2016 # $$ is the inner shell's
	want=$(sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$CG" $run 2>&1)
	want=${want%% *}
	for how in authoritative kernel no-baseline; do
		case $how in
		no-baseline) opt=--no-baseline ;;
		*) opt=--mode=$how ;;
		esac
		# shellcheck disable=SC2086 # run is words
		got=$("$RUN" $opt --deny a --allow "$rule" -- $run 2>/dev/null)
		got=${got%% *}
		[ "$got" = "$want" ] || { [[ $got$want =~ ^E[A-Z]+E[A-Z]+$ ]] &&
			[[ $got$want == *EPERM* ]] && [[ $got$want =~ ^(EPERM|EACCES)+$ ]]; } || fail "seed $seed, tuple $i: open $node ($t $maj:$min, mode" \
			"$mode) $acc, caps $keep, rule '$rule', $how: devwl $got, kernel $want"
	done
done
echo "PASS: $n tuples (seed $seed), 3 modes each"
