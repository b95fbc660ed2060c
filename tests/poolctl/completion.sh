#!/bin/bash
# poolctl's bash completion offers every option each command's --help lists
# (so the two can't drift apart), the verbs of each noun, and the names of
# pools and domains from a sysfs tree.  usage: completion.sh POOLCTL FIXTURES COMPLETION
set -u
poolctl=$1 fix=$(cd "$2" && pwd) comp=$3
. "$comp"
export POOLCTL_SYSFS=$fix/sysfs-poolmem
fails=0
# complete WORDS...: COMPREPLY for the last word
complete_words() {
	COMP_WORDS=(poolctl "$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_poolctl
	echo "${COMPREPLY[*]}"
}
want() { # WHAT HAVE WORD...
	local what=$1 have=" $2 " w
	shift 2
	for w in "$@"; do
		[[ $have == *" $w "* ]] || { echo "FAIL: $what: '$w' not offered (got:$have)"; fails=$((fails + 1)); }
	done
}
for c in "node list" "pool online" "pool add" "pool list" "pool show" "pool drain" "vm create" "vm list" \
	"vm show" "vm map" "vm set" "status" "top" "profile create" "profile list" "profile show" "simulate plan" "simulate record" "cluster status" "cluster register" "cluster claim" "cluster fence"; do
	opts=$("$poolctl" $c --help 2>&1 | grep -oE '^\s+(-[a-z],)?--[a-z][a-z.-]*' | sed 's/.*--/--/' | grep -v -- '--help')
	want "poolctl $c --" "$(complete_words $c --)" $opts
done
want "nouns" "$(complete_words '')" node pool vm profile status top simulate cluster
want "pool verbs" "$(complete_words pool '')" online add list show offline drain undrain remove
want "vm verbs" "$(complete_words vm '')" create list show map set destroy
want "pool names" "$(complete_words pool show '')" cxl0 cxl1
want "domain names" "$(complete_words vm show '')" web1
want "--pools" "$(complete_words vm create x --pools '')" cxl0 cxl1
want "--tier-policy" "$(complete_words vm create x --tier-policy '')" local-first interleave pool-first
want "--tiering" "$(complete_words vm set web1 --tiering '')" on sample off
[ $fails -eq 0 ] && echo "ok: completion offers every --help option, verbs and names"
exit $fails
