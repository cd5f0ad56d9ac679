# The reports in a kernel console log, one line each, with the test
# program that was running when it came:
#   KIND<TAB>PROGRAM<TAB>LINE
# PROGRAM is SUITE/PROG between ktap-run's "ktap-run: start SUITE/PROG" and
# "ktap-run: end SUITE/PROG" lines, "-" outside any program (the boot, the
# harness's own work, after the end). KIND is
#   report      a warning, BUG, Oops, general protection fault, KASAN,
#               UBSAN, lockdep, list corruption, kmemleak, page_counter
#               underflow or kernel panic
#   oom         the OOM killer ("invoked oom-killer", "Out of memory",
#               "oom-kill:")
#   rcu stall   "rcu: INFO: ... detected stalls", "self-detected stall"
#   hung task   "INFO: task ... blocked for more than"
#   VM_FAULT_OOM leaked
#               "Huh VM_FAULT_OOM leaked out to the #PF handler" outside the
#               window the stress-faults suite marks with "harness:
#               injected faults on" and "... off" (inside it, the
#               unpatched kernel's answer to an injected allocation failure
#               in a page fault: not a report)
# The verdict decides which kinds a program may show (scripts/verdict.sh).
function report(kind) { printf "%s\t%s\t%s\n", kind, prog, $0 }
BEGIN { prog = "-"; faults = 0 }
{ sub(/\r$/, "") }
/(^|\] )ktap-run: start [^ ]+$/ { prog = $NF; faults = 0; next }
/(^|\] )ktap-run: end [^ ]+$/ { prog = "-"; faults = 0; next }
/(^|\] )harness: injected faults on$/ { faults = 1; next }
/(^|\] )harness: injected faults off$/ { faults = 0; next }
/WARNING:|BUG:|kernel BUG|Oops|general protection fault|KASAN|UBSAN|Kernel panic|possible circular locking|possible recursive locking|inconsistent lock state|DEBUG_LOCKS_WARN|suspicious RCU usage|list_add corruption|list_del corruption|kmemleak: [0-9]+ new suspected|hard LOCKUP|page_counter underflow/ {
	report("report")
	next
}
/VM_FAULT_OOM leaked/ { if (!faults) report("VM_FAULT_OOM leaked"); next }
/[Oo]ut of memory|oom-kill/ { report("oom"); next }
/rcu: INFO|detected stalls|detected expedited stalls|self-detected stall/ { report("rcu stall"); next }
/INFO: task .* blocked/ { report("hung task"); next }
