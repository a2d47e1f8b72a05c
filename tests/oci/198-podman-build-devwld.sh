# tests/oci/195-buildah-devwld.sh with `podman build` (Debian's podman 4.3: the buildah
# library inside, --isolation=chroot, offline FROM scratch; tests/rootless-build.sh): the
# rootless build handed to devwld with the full and the mknod-only profile builds on a
# node granting /dev/fuse, devwld refusing nothing, and fails at once on one that does
# not, the refusal audited.
RB_TOOL=podman exec bash "$(dirname "$0")/195-buildah-devwld.sh" "$@"
