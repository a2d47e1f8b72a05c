# Rootless podman run by an unprivileged user (HOME and XDG_RUNTIME_DIR its own, no
# image: --rootfs on the busybox root file system of 185 and 186, the guide's profile
# pointing at devwld), once with --runtime runc and once with crun through the guide's
# bin/crun-hybrid, against a root devwld with --allow-uid (devwld(8) USERS;
# examples/rootless/README.md section 5): the same workload as 185 and 186. Each
# container is /users/65534/ID (podman's id), owned by 65534; denials fail EPERM with
# their reasons; 100 granted mknod + open on its nodev /dev all open with the default
# handler threads and again after devwlctl restart; an attached loop device reads; a
# fuse2fs mount it makes is used with every open trapped.
RT=podman
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/rootless.sh"
rootless_setup
PM_RT=runc
rootless_workload rl-pod-runc
PM_RT=crun
rootless_workload rl-pod-crun
exit 0
