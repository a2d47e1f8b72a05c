# tests/oci/151-attach.sh with crun.
RT=crun
. "$(dirname "$0")/151-attach.sh"
