# tests/oci/151-attach.sh with devwld answering every trapped open itself
# (--kernel-mode never): the attached device is opened on the caller's behalf.
KM=never
. "$(dirname "$0")/151-attach.sh"
