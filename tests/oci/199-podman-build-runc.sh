# tests/oci/196-buildah-runc.sh with `podman build` (Debian's podman 4.3, the buildah
# library inside, --isolation=chroot, offline FROM scratch): the rootless build in a runc
# container served by devwld, full and mknod-only profiles, builds where devwld's node
# grants /dev/fuse and fails at once where it does not.
RB_TOOL=podman exec bash "$(dirname "$0")/196-buildah-runc.sh" "$@"
