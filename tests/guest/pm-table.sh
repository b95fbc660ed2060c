# rig-topologies: nvdimm-numa
# rig-debug: core
# rig-core: yes
# THEORY OF OPERATION: /proc/poolmem/domains has one line per domain with
# the values of its sysfs files, and /proc/poolmem/domain_histograms its
# fault latency histogram, so that a reader of thousands of domains makes
# one read instead of twenty files per domain (issue 33). Shown here:
#  1. each line says what the domain's sysfs files say (named, profile,
#     znuma and tiering domains; a file name with a space; pools, windows);
#  2. poolctl and the exporter give the same figures from the table as
#     from sysfs (--procfs / --path.procfs pointing nowhere);
#  3. the seq_file iterator: a table of hundreds of domains read whole and
#     in small pieces (each read resumes where the last stopped) and from
#     a seek gives the same bytes; reads while domains come and go give only whole
#     lines of live domains;
#  4. the files are root:stats_gid 0440 as the domains' sysfs directories.
. /rig/tests/lib/common.sh
pm_pools_up
T=/proc/poolmem/domains
H=/proc/poolmem/domain_histograms
[ -r $T ] || fail "$T missing"
[ -r $H ] || fail "$H missing"
check_eq "table mode and owner" "440 0 0" "$(stat -c '%a %u %g' $T)"
check_eq "histograms mode and owner" "440 0 0" "$(stat -c '%a %u %g' $H)"
check_eq "empty table" 1 "$(wc -l < $T)"

# --- 1. domains of every kind ---
pmtest domain-create plain 16M 8M 8M >/dev/null
pmtest touch plain 0 16M >/dev/null
pmtest domain-create pooled 32M 0 32M pools=p0,p1 select=round-robin >/dev/null
pmtest touch pooled 0 12M >/dev/null
pmtest punch pooled 0 2M >/dev/null || fail "punch pooled"
poolctl vm create zn --size 16M --local 8M --pool 8M --znuma --pools p0 >/dev/null || fail "vm create --znuma"
pmtest touch zn 0 16M >/dev/null
poolctl vm set pooled --tiering sample --scan-rate 64M >/dev/null || fail "tiering sample"
wait_for 20 sh -c "[ \$(cat $DOMSYS/pooled/samples) -gt 0 ]" || fail "no samples on pooled"
poolctl vm set pooled --tiering off >/dev/null
poolctl profile create prof --local 50% --pool 50% >/dev/null || fail "profile create prof"
truncate -s 16M "/run/poolmem/prof/my vm" || fail "truncate a profile file"
pdom=$(profile_domain prof)
[ -n "$pdom" ] || fail "no domain for /run/poolmem/prof/my vm"
n=$(ls $DOMSYS | wc -l)
check_eq "lines" $((n + 1)) "$(wc -l < $T)"
check_eq "histogram lines" $((n + 1)) "$(wc -l < $H)"

# every column against the domain's own file, by the header's names:
# "DOMAIN:COLUMN VALUE" lines from one awk, the files read by the shell's
# read (no fork per file: forks cost most of this test on the debug kernel)
hdr=$(head -n 1 $T)
awk 'NR == 1 { for (i = 2; i <= NF; i++) c[i - 1] = $i; next }
	{ for (i = 1; i <= NF; i++) print $1 ":" c[i] " " $i }' $T > /tmp/t.kv
checked=0
while read -r key val; do
	d=${key%%:*} f=${key#*:}
	case $f in tiering|pool_chunks|windows|profile|file) continue ;; esac	# other formats: below
	[ -f $DOMSYS/$d/$f ] || continue
	read -r want < $DOMSYS/$d/$f
	[ "$val" = "$want" ] || fail "$d $f: table '$val', sysfs '$want'"
	checked=$((checked + 1))
done < /tmp/t.kv
[ $checked -ge $((n * 26)) ] || fail "only $checked values checked for $n domains"
info "ok: $checked values of $n domains as their sysfs files say"
field() { sed -n "s/^$1:$2 //p" /tmp/t.kv; }
for d in $(ls $DOMSYS); do
	check_eq "$d tiering" "$(cat $DOMSYS/$d/tiering)" \
		"$(field $d tiering) $(field $d scan_rate) $(field $d hot_ms)"
	check_eq "$d heat" "$(cat $DOMSYS/$d/heat)" "$(field $d hot_chunks) $(field $d cold_chunks)"
	pc=$(awk '{ printf "%s%s:%s", (NR > 1 ? "," : ""), $1, $2 }' $DOMSYS/$d/pool_chunks)
	check_eq "$d pool_chunks" "${pc:--}" "$(field $d pool_chunks)"
	check_eq "$d histogram" "$d $(cat $DOMSYS/$d/fault_latency_histogram)" "$(grep "^$d " $H)"
done
check_eq "zn windows" "local:0:8388608,pool:8388608:8388608" "$(field zn windows)"
check_eq "plain windows" "-" "$(field plain windows)"
check_eq "plain profile" "-" "$(field plain profile)"
check_eq "$pdom profile" prof "$(field $pdom profile)"
check_eq "$pdom file (escaped)" '/prof/my\040vm' "$(field $pdom file)"
check_eq "$pdom creator" "$(cat $DOMSYS/$pdom/creator | tr ' ' '\n' | head -n 1)" "$(field $pdom creator_pid)"

# --- 2. the readers: the same figures from the table as from sysfs ---
poolctl vm list --json > /tmp/table.json || fail "vm list (table)"
poolctl --procfs /nonexistent vm list --json > /tmp/sysfs.json || fail "vm list (sysfs)"
cmp -s /tmp/table.json /tmp/sysfs.json || fail "vm list differs: $(diff /tmp/sysfs.json /tmp/table.json | head -n 8)"
grep -q '"file": "/prof/my vm"' /tmp/table.json || fail "vm list --json: no file '/prof/my vm'"
poolmem-exporter --once | grep '^poolmem_domain_' | sort > /tmp/table.prom || fail "exporter (table)"
poolmem-exporter --once --path.procfs /nonexistent 2>/dev/null | grep '^poolmem_domain_' | sort > /tmp/sysfs.prom
[ $(wc -l < /tmp/table.prom) -gt 100 ] || fail "exporter: only $(wc -l < /tmp/table.prom) domain series"
cmp -s /tmp/table.prom /tmp/sysfs.prom || fail "exporter differs: $(diff /tmp/sysfs.prom /tmp/table.prom | head -n 8)"
info "ok: poolctl vm list and the exporter agree from the table and from sysfs"

# --- 3. the iterator: hundreds of domains, any read size, seeks, churn ---
# (fewer on the debug kernel, where each domain made costs 30 times more:
# its locking and lifetime checks need the paths, not the numbers)
N=400 C=400 R=3	# domains; of them, made and destroyed R times during reads
case "$(uname -r)" in *pmdbg*) N=100 C=40 R=2 ;; esac
pmtest scale-create t 0 $N 2M 2M 0 >/dev/null || fail "scale-create $N"
check_eq "lines with $N more" $((n + N + 1)) "$(wc -l < $T)"
whole=$(md5sum < $T)
bytes=$(wc -c < $T)
[ $bytes -gt $((N * 50)) ] || fail "table of only $bytes bytes"
check_eq "the first 5000 bytes read one at a time" "$(head -c 5000 $T | md5sum)" \
	"$(dd if=$T bs=1 count=5000 2>/dev/null | md5sum)"
for bs in 7 100 4096 65536 1048576; do
	check_eq "read in $bs-byte pieces" "$whole" "$(dd if=$T bs=$bs 2>/dev/null | md5sum)"
done
# a seek (dd skip) walks from the start: the same bytes as reading on
for skip in 1 10 $((bytes / 1333)); do
	check_eq "from byte $((skip * 1000))" "$(dd if=$T bs=1000 2>/dev/null | tail -c +$((skip * 1000 + 1)) | md5sum)" \
		"$(dd if=$T bs=1000 skip=$skip 2>/dev/null | md5sum)"
done
# a reader at the end stays there: domains made meanwhile in lower ids
# move the others up, and a walk to its position would show them again
pmtest scale-destroy t 0 5 >/dev/null
exec 3< $T
cat <&3 > /dev/null
pmtest scale-create t 0 5 2M 2M 0 >/dev/null
check_eq "read on at the end after 5 domains were made" "" "$(cat <&3)"
exec 3<&-
# readers while domains are made and destroyed: whole lines only, of
# the header's width, no domain twice
ncol=$(echo "$hdr" | wc -w)
(for i in $(seq $R); do
	pmtest scale-destroy t 0 $C >/dev/null
	pmtest scale-create t 0 $C 2M 2M 0 >/dev/null
done) &
churn=$!
reads=0
while kill -0 $churn 2>/dev/null; do
	dd if=$T bs=333 2>/dev/null > /tmp/t.read
	awk -v w=$((ncol - 1)) 'NR > 1 && NF != w { print "line " NR " has " NF " fields: " $0; exit 1 }
		NR > 1 && seen[$1]++ { print "domain " $1 " twice"; exit 1 }' /tmp/t.read > /tmp/t.bad ||
		fail "a read during churn: $(cat /tmp/t.bad)"
	reads=$((reads + 1))
done
wait $churn || fail "churn failed"
[ $reads -ge 3 ] || fail "only $reads reads during the churn"
info "ok: $reads reads during churn, whole lines each"
pmtest scale-destroy t 0 $N >/dev/null
check_eq "lines after destroy" $((n + 1)) "$(wc -l < $T)"

# --- 4. stats_gid: the group reads the table, others can't ---
pmtest run-as 65534 65534 cat $T >/dev/null 2>&1 && fail "an unprivileged user read $T"
expect_exit 1 "Permission denied" pmtest run-as 65534 65534 cat $T
rm -rf /run/poolmem/prof
for d in plain pooled zn; do pmtest domain-destroy $d >/dev/null; done
pm_clean
umount /run/poolmem 2>/dev/null || true
rmmod poolmem || fail "rmmod poolmem"
modprobe poolmem stats_gid=1000 || fail "modprobe poolmem stats_gid=1000"
check_eq "table owner with stats_gid" "440 0 1000" "$(stat -c '%a %u %g' $T)"
pmtest domain-create grp 16M 16M 0 >/dev/null
pmtest run-as 1000 1000 cat $T | grep -q '^grp ' || fail "group 1000 can't read grp's line"
pmtest run-as 1000 1000 cat $H | grep -q '^grp ' || fail "group 1000 can't read grp's histogram"
expect_exit 1 "Permission denied" pmtest run-as 65534 65534 cat $H
pmtest domain-destroy grp >/dev/null
pm_clean
umount /run/poolmem 2>/dev/null || true
rmmod poolmem || fail "rmmod poolmem"
modprobe poolmem || fail "modprobe poolmem"
info "pass"
