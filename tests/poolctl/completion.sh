#!/bin/bash
# poolctl's bash completion offers every option each command's --help lists
# (so the two can't drift apart), the verbs of each noun, and the names of
# pools and domains from a sysfs tree.  usage: completion.sh POOLCTL FIXTURES COMPLETION
set -u
poolctl=$1 fix=$(cd "$2" && pwd) comp=$3
. "$comp"
export POOLCTL_SYSFS=$fix/sysfs-poolmem POOLCTL_BIN=$poolctl
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
# every command --help lists, nouns and their verbs: none can be added
# without its completion
subs() { "$poolctl" $1 --help 2>&1 | sed -n '/^Subcommands:/,$p' | tail -n +2 | awk 'NF { print $1 }'; }
nouns=$(subs "")
[ -n "$nouns" ] || { echo "FAIL: no subcommands in poolctl --help"; exit 1; }
want "nouns" "$(complete_words '')" $nouns
for n in $nouns; do
	verbs=$(subs "$n")
	if [ -z "$verbs" ]; then
		cmds="$n"
	else
		want "$n verbs" "$(complete_words $n '')" $verbs
		cmds=$(for v in $verbs; do echo "$n:$v"; done)
	fi
	for c in $cmds; do
		c=${c/:/ }
		opts=$("$poolctl" $c --help 2>&1 | grep -oE '^\s+(-[a-z],)?--[a-z][a-z.-]*' | sed 's/.*--/--/' | grep -v -- '--help')
		want "poolctl $c --" "$(complete_words $c --)" $opts
	done
done
want "pool names" "$(complete_words pool show '')" cxl0 cxl1
want "domain names" "$(complete_words vm show '')" web1
want "--pools" "$(complete_words vm create x --pools '')" cxl0 cxl1
want "--tier-policy" "$(complete_words vm create x --tier-policy '')" local-first interleave pool-first
want "--tiering" "$(complete_words vm set web1 --tiering '')" on sample off
want "pool set names" "$(complete_words pool set '')" cxl0 cxl1
want "pool events --pool" "$(complete_words pool events --pool '')" cxl0 cxl1
want "pool events --domain" "$(complete_words pool events --domain '')" web1
want "--on-errors" "$(complete_words pool set cxl0 --on-errors '')" report drain
[ $fails -eq 0 ] && echo "ok: completion offers every --help option, verbs and names"
exit $fails
