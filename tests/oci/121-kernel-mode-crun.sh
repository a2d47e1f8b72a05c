# tests/oci/120-kernel-mode.sh with crun.
RT=crun
. "$(dirname "$0")/120-kernel-mode.sh"
