#!/bin/bash
# tests/live/82-buildah-build.sh with podman: `podman build` (Debian's podman 4.3, the
# buildah library inside; --isolation=chroot, offline: FROM scratch) of the same small
# image (COPY a static busybox and a file; RUN busybox in it) by an unprivileged user with
# its own /etc/subuid and /etc/subgid ranges, on fuse-overlayfs in its user namespace,
# under devwl-run in kernel and authoritative mode with /dev/fuse granted: it builds, the
# RUN reads the COPY'd file from a fuse-overlayfs root, nothing is refused. Without the
# grant the build fails at once, fuse-overlayfs saying it cannot open /dev/fuse, and devwl
# (authoritative) audits the refusal. The set-up: tests/rootless-build.sh (podman's
# containers.conf: events to a file, cgroupfs; the user's session has no systemd).
RB_TOOL=podman exec bash "$(dirname "$0")/82-buildah-build.sh" "$@"
