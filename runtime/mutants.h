/*
 * mutants.h -- build switches that break one persistence site each, to
 * prove that `cairn crashcheck` catches a runtime that persists wrongly
 * (tests/crashcheck/test_mutants.py). Built with -DCAIRN_MUTANT=CAIRN_MUT_X
 * (or its number), CAIRN_MUTATED(X) is 1 at site X only; without
 * CAIRN_MUTANT every CAIRN_MUTATED is 0 and the code is the shipped code.
 *
 * One line per mutant: M(number, NAME, kind, workload, "site", "survivor")
 *   kind      drop (the flush, fence or non-temporal store is not done; a
 *             dropped NT store becomes a plain cached store, never written
 *             back), move (done after what it must precede), wrong (aimed
 *             at the next line)
 *   workload  what the test runs under crashcheck (test_mutants.py WORKLOADS)
 *   survivor  "" when the mutant must be caught; else why no workload can
 *             catch it (the test then expects exit 0 and says so)
 */
#ifndef CAIRN_MUTANTS_H
#define CAIRN_MUTANTS_H

#define CAIRN_MUTANT_TABLE(M) \
    M(1, FENCE_FAST, drop, corpus:commit_across_lines, "persist.h cairn__fence_fast: the inline sfence", "") \
    M(2, FLUSH_LINE_FAST, drop, corpus:commit_across_lines, "persist.h cairn__flush_line_fast: the inline clwb", "") \
    M(3, FLUSH_LINE_FAST_NEXT, wrong, corpus:commit_across_lines, "persist.h cairn__flush_line_fast: the inline clwb", "") \
    M(4, WRITE_LINE_FAST_NT, drop, corpus:commit_across_lines, "persist.h cairn__pm_write_line_fast: the NT stores of a log line", "a log line left in the cache, never written back: not caught by commit_across_lines or trace_cost; not analysed (emit_rec_lines' twin site is caught by kvstore)") \
    M(5, FLUSH_RANGE, drop, trace_cost, "persist.c cairn__flush_range: every out-of-line flush", "") \
    M(6, FLUSH_RANGE_NEXT, wrong, trace_cost, "persist.c cairn__flush_range: every out-of-line flush", "") \
    M(7, WRITE_LINES_NT, drop, trace_cost, "persist.c cairn__pm_write_lines: the NT stores", "not caught by trace_cost; not analysed") \
    M(8, ZERO_FLUSH_NT, drop, kvstore, "persist.c cairn__zero_flush: NT zeroing of >= 1 KiB", "fresh objects' zeroes: kvstore's verify reads only fields it wrote after the allocation") \
    M(9, ZERO_FLUSH, drop, trace_cost, "persist.c cairn__zero_flush: the flush after memset", "fresh objects' zeroes: trace_cost writes what it reads, the pool check reads no object contents") \
    M(10, OFENCE_POOL, drop, trace_cost, "persist.c cairn__ofence_pool: the sfence", "") \
    M(11, DFENCE_POOL, drop, trace_cost, "persist.c cairn__dfence_pool: the sfence", "durability, not atomicity: the next fence orders the same lines, and no workload's check asserts that what a call acknowledged stays") \
    M(12, PUBLIC_FLUSH, drop, corpus:store_after_flush, "persist.c cairn_flush", "") \
    M(13, PERSIST_FLUSH, drop, corpus:flag_before_data, "persist.c cairn_persist: the flush", "") \
    M(14, PERSIST_DFENCE, drop, corpus:flag_before_data, "persist.c cairn_persist: the dfence", "") \
    M(15, PUBLIC_OFENCE, drop, corpus:nt_store_no_fence, "persist.c cairn_ofence", "") \
    M(16, PUBLIC_DFENCE, drop, corpus:fence_between_flushes, "persist.c cairn_dfence", "") \
    M(17, ALLOC_TABLE_FLUSH, drop, trace_cost, "alloc.c table_write: the chunk table word's flush", "") \
    M(18, ALLOC_RUN_OFENCE, drop, trace_cost, "alloc.c a new run: its table word before its objects", "not caught by trace_cost; not analysed") \
    M(19, ALLOC_LARGE_OFENCE, drop, kvstore, "alloc.c a large block: its table words before any link", "not caught by kvstore; not analysed") \
    M(20, ALLOC_BITMAP_FLUSH, drop, trace_cost, "alloc.c write-back at close: a run's bitmap", "") \
    M(21, ALLOC_WRITEBACK_OFENCE, drop, trace_cost, "alloc.c write-back at close: the fence after it", "") \
    M(22, STATE_FLUSH, drop, trace_cost, "format.c cairn__state_write: the state copy's flush", "pool state copy: not caught by trace_cost; not analysed") \
    M(23, STATE_DFENCE, drop, trace_cost, "format.c cairn__state_write: the dfence", "durability, not atomicity: the next fence orders the same lines, and no workload's check asserts that what a call acknowledged stays") \
    M(24, CLEAN_FLUSH, drop, trace_cost, "format.c cairn__clean_set: the clean flag's flush", "the clean flag at close: not caught by trace_cost; not analysed") \
    M(25, CLEAN_DFENCE, drop, trace_cost, "format.c cairn__clean_set: the dfence", "durability, not atomicity: the next fence orders the same lines, and no workload's check asserts that what a call acknowledged stays") \
    M(26, GC_OFENCE, drop, trace_cost, "gc.c after a sweep: the fence over freed chunks' table words", "not caught by trace_cost; not analysed (whether a sweep runs in it)") \
    M(27, ROOT_OFENCE, drop, trace_cost, "handle.c the root's zeroes before the root record", "the root's zeroes: trace_cost writes what it reads") \
    M(28, ALLOC_ZERO_OFENCE, drop, trace_cost, "object.c an atomic allocation's zeroes before any link", "fresh objects' zeroes: trace_cost writes what it reads") \
    M(29, HEADER_FLUSH, drop, trace_cost, "pool.c pool create: the header's flush", "pool create: not caught by trace_cost; not analysed (suspect: the starting image is taken after create)") \
    M(30, UNDO_FLUSH, drop, trace_cost, "recover.c cairn__undo_apply: the restored range's flush", "recovery runs in the check process, untraced: only the built-in check's nested crash reaches it, and recovery plus the pool check cannot see a user invariant broken by a half-done roll-back") \
    M(31, RECOVER_OFENCE, drop, trace_cost, "recover.c restored data before retiring the lane", "recovery runs in the check process, untraced: only the built-in check's nested crash reaches it, and recovery plus the pool check cannot see a user invariant broken by a half-done roll-back") \
    M(32, RECOVER_OFENCE_MOVED, move, trace_cost, "recover.c the same fence after the lane is retired", "recovery runs in the check process, untraced: only the built-in check's nested crash reaches it, and recovery plus the pool check cannot see a user invariant broken by a half-done roll-back") \
    M(33, RECOVER_GEN_FLUSH, drop, trace_cost, "recover.c the retired lane generation's flush", "recovery runs in the check process, untraced: only the built-in check's nested crash reaches it, and recovery plus the pool check cannot see a user invariant broken by a half-done roll-back") \
    M(34, RECOVER_DFENCE, drop, trace_cost, "recover.c the dfence after the lane is retired", "recovery runs in the check process, untraced: only the built-in check's nested crash reaches it, and recovery plus the pool check cannot see a user invariant broken by a half-done roll-back") \
    M(35, TX_FIRST_REC_NT, drop, corpus:commit_across_lines, "tx.c emit_rec: the first record's NT stores", "the same as WRITE_LINE_FAST_NT for the first record; not analysed") \
    M(36, TX_REC_LINE_NT, drop, corpus:commit_across_lines, "tx.c emit_rec: a later record's line (pm_write_line_fast)", "the same as WRITE_LINE_FAST_NT; not analysed") \
    M(37, TX_REC_LINES_NT, drop, kvstore, "tx.c emit_rec_lines: a record over line ends (pm_write_lines)", "") \
    M(38, TX_LOG_FENCE, drop, corpus:commit_across_lines, "tx.c cairn_tx_add: the record before the store", "") \
    M(39, TX_FLUSH_LINES, drop, corpus:commit_across_lines, "tx.c flush_written: the logged lines (flush_line_fast)", "") \
    M(40, TX_FLUSH_BIG, drop, kvstore, "tx.c flush_written: large logged ranges", "not caught by kvstore; not analysed") \
    M(41, TX_FLUSH_CLOB, drop, kvstore, "tx.c flush_written: clobbered ranges", "no correct workload calls cairn_tx_clobber (clobber_needs_undo's twin uses cairn_tx_add)") \
    M(42, TX_FLUSH_FRESH, drop, kvstore, "tx.c flush_written: objects allocated in the transaction", "not caught by kvstore; not analysed") \
    M(43, TX_MARK_NT, drop, corpus:commit_across_lines, "tx.c retire_log: the commit mark's NT stores", "a commit mark left in the cache rolls the committed transaction back whole: durability, not atomicity: the next fence orders the same lines, and no workload's check asserts that what a call acknowledged stays") \
    M(44, TX_MARK_LINES, drop, trace_cost_msync, "tx.c retire_log: the commit mark, msync domain", "the msync-domain commit mark: durability, not atomicity: the next fence orders the same lines, and no workload's check asserts that what a call acknowledged stays") \
    M(45, TX_MARK_DFENCE, drop, corpus:commit_across_lines, "tx.c retire_log: the dfence after the mark", "durability, not atomicity: the next fence orders the same lines, and no workload's check asserts that what a call acknowledged stays") \
    M(46, TX_DATA_FENCE, drop, corpus:commit_across_lines, "tx.c cairn_tx_commit: data before the mark", "") \
    M(47, TX_DATA_FENCE_MOVED, move, corpus:commit_across_lines, "tx.c cairn_tx_commit: that fence after the mark", "") \
    M(48, TX_NOLOG_DFENCE, drop, kvstore, "tx.c cairn_tx_commit: the dfence of a tx with no records", "durability, not atomicity: the next fence orders the same lines, and no workload's check asserts that what a call acknowledged stays") \
    M(49, TX_ABORT_OFENCE, drop, kvstore, "tx.c cairn_tx_abort: restored data before retiring", "no workload aborts a transaction (kvstore aborts only when out of memory): site not reached")

#define CAIRN_MUT_ENUM_(n, name, kind, workload, site, survivor) CAIRN_MUT_##name = n,
enum { CAIRN_MUTANT_TABLE(CAIRN_MUT_ENUM_) CAIRN_MUT_COUNT_ };

#ifdef CAIRN_MUTANT
#define CAIRN_MUTATED(name) (CAIRN_MUTANT == CAIRN_MUT_##name)
#else
#define CAIRN_MUTATED(name) 0
#endif

#endif
