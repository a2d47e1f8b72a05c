# runc as an unprivileged user (`runc --root DIR run`, the spec from `runc spec
# --rootless`, the full profile's listenerPath pointing at devwld), against a root devwld
# with --allow-uid (devwld(8) USERS; examples/rootless/README.md): the container is
# /users/65534/ID, owned by 65534; denials fail EPERM with their reasons; 100 granted
# mknod + open on its nodev /dev all open with the default handler threads and again
# after devwlctl restart; an attached loop device reads; a fuse2fs mount it makes is
# used with every open trapped (devwld looks its paths up as the caller). With the
# mknod-only profile (mode=kernel) the container is unprogrammed: permissions alone decide.
RT=runc
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/rootless.sh"
rootless_setup
rootless_workload rl-runc
rootless_kernel_mode rl-runc-k
exit 0
