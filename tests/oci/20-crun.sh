RT=crun
. "$(dirname "$0")/suite.sh"
