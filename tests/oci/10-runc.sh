RT=runc
. "$(dirname "$0")/suite.sh"
