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
 *   workload  what the test runs under crashcheck (test_mutants.py
 *             run_workload): rt:JOB is tests/crashcheck/rt_jobs.c's JOB
 *             (rtjobs.py JOBS), corpus:NAME a corpus program, trace_cost
 *             and kvstore the benchmark loop and the example
 *   survivor  "" when the mutant must be caught; else why no workload can
 *             catch it (the test then expects exit 0 and says so)
 */
#ifndef CAIRN_MUTANTS_H
#define CAIRN_MUTANTS_H

#define CAIRN_MUTANT_TABLE(M) \
    M(1, FENCE_FAST, drop, corpus:commit_across_lines, "persist.h cairn__fence_fast: the inline sfence", "") \
    M(2, FLUSH_LINE_FAST, drop, corpus:commit_across_lines, "persist.h cairn__flush_line_fast: the inline clwb", "") \
    M(3, FLUSH_LINE_FAST_NEXT, wrong, corpus:commit_across_lines, "persist.h cairn__flush_line_fast: the inline clwb", "") \
    M(4, WRITE_LINE_FAST_NT, drop, rt:commit, "persist.h cairn__pm_write_line_fast: the NT stores of a log line", "") \
    M(5, FLUSH_RANGE, drop, trace_cost, "persist.c cairn__flush_range: every out-of-line flush", "") \
    M(6, FLUSH_RANGE_NEXT, wrong, trace_cost, "persist.c cairn__flush_range: every out-of-line flush", "") \
    M(7, WRITE_LINES_NT, drop, rt:commit, "persist.c cairn__pm_write_lines: the NT stores", "") \
    M(8, ZERO_FLUSH_NT, drop, rt:zero, "persist.c cairn__zero_flush: NT zeroing of >= 1 KiB", "") \
    M(9, ZERO_FLUSH, drop, rt:zero, "persist.c cairn__zero_flush: the flush after memset", "") \
    M(10, OFENCE_POOL, drop, trace_cost, "persist.c cairn__ofence_pool: the sfence", "") \
    M(11, DFENCE_POOL, drop, rt:clobber, "persist.c cairn__dfence_pool: the sfence", "") \
    M(12, PUBLIC_FLUSH, drop, corpus:store_after_flush, "persist.c cairn_flush", "") \
    M(13, PERSIST_FLUSH, drop, corpus:flag_before_data, "persist.c cairn_persist: the flush", "") \
    M(14, PERSIST_DFENCE, drop, corpus:flag_before_data, "persist.c cairn_persist: the dfence", "") \
    M(15, PUBLIC_OFENCE, drop, corpus:nt_store_no_fence, "persist.c cairn_ofence", "") \
    M(16, PUBLIC_DFENCE, drop, corpus:fence_between_flushes, "persist.c cairn_dfence", "") \
    M(17, ALLOC_TABLE_FLUSH, drop, trace_cost, "alloc.c table_write: the chunk table word's flush", "") \
    M(18, ALLOC_RUN_OFENCE, drop, rt:publish, "alloc.c a new run: its table word before its objects", "") \
    M(19, ALLOC_LARGE_OFENCE, drop, rt:publish, "alloc.c a large block: its table words before any link", "") \
    M(20, ALLOC_BITMAP_FLUSH, drop, trace_cost, "alloc.c write-back at close: a run's bitmap", "") \
    M(21, ALLOC_WRITEBACK_OFENCE, drop, rt:wbfree, "alloc.c write-back at close: the fence after it", "") \
    M(22, STATE_FLUSH, drop, rt:grow, "format.c cairn__state_write: the state copy's flush", "") \
    M(23, STATE_DFENCE, drop, rt:grow, "format.c cairn__state_write: the dfence", "") \
    M(24, CLEAN_FLUSH, drop, rt:commit, "format.c cairn__clean_set: the clean flag's flush", "") \
    M(25, CLEAN_DFENCE, drop, rt:commit, "format.c cairn__clean_set: the dfence", "") \
    M(26, GC_OFENCE, drop, rt:gc, "gc.c after a sweep: the fence over freed chunks' table words", "redundant: a freed chunk whose table word is lost stays allocated and unreachable on media, and the next recovery's mark frees it again (no loss); any reuse of the chunk rewrites that same word (later in the line, so it persists only with the free) and fences it before a link (ALLOC_RUN_OFENCE, ALLOC_LARGE_OFENCE); rt:gc passes with it (its trace starts before the open's recovery, so the background mark and sweep run under it)") \
    M(27, ROOT_OFENCE, drop, rt:root, "handle.c the root's zeroes before the root record", "") \
    M(28, ALLOC_ZERO_OFENCE, drop, rt:zero, "object.c an atomic allocation's zeroes before any link", "") \
    M(29, HEADER_FLUSH, drop, rt:commit, "pool.c pool create: the header's flush", "the trace starts from the image pool create leaves in memory, header included, and no later write touches the header: no crash state can lack it (a crash inside create leaves a file that open refuses, which no image replays)") \
    M(30, UNDO_FLUSH, drop, rt:abort, "recover.c cairn__undo_apply: the restored range's flush", "") \
    M(31, RECOVER_OFENCE, drop, rt:recover, "recover.c restored data before retiring the lane", "") \
    M(32, RECOVER_OFENCE_MOVED, move, rt:recover, "recover.c the same fence after the lane is retired", "") \
    M(33, RECOVER_GEN_FLUSH, drop, rt:recover, "recover.c the retired lane generation's flush", "") \
    M(34, RECOVER_DFENCE, drop, rt:recover, "recover.c the dfence after the lane is retired", "redundant: the retired generation is flushed, and the next fence of any kind (the next lane's RECOVER_OFENCE, or the open's cairn__clean_set before it returns) makes it durable; until then recovery writes only other lanes' restored data and the mark's DRAM maps, and a second recovery over a lost generation rolls back the same records to the same values; rt:recover passes with it dropped") \
    M(35, TX_FIRST_REC_NT, drop, rt:commit, "tx.c emit_rec: the first record's NT stores", "") \
    M(36, TX_REC_LINE_NT, drop, rt:commit, "tx.c emit_rec: a later record's line (pm_write_line_fast)", "") \
    M(37, TX_REC_LINES_NT, drop, kvstore, "tx.c emit_rec_lines: a record over line ends (pm_write_lines)", "") \
    M(38, TX_LOG_FENCE, drop, corpus:commit_across_lines, "tx.c cairn_tx_add: the record before the store", "") \
    M(39, TX_FLUSH_LINES, drop, corpus:commit_across_lines, "tx.c flush_written: the logged lines (flush_line_fast)", "") \
    M(40, TX_FLUSH_BIG, drop, rt:bigrec, "tx.c flush_written: large logged ranges", "") \
    M(41, TX_FLUSH_CLOB, drop, rt:clobber, "tx.c flush_written: clobbered ranges", "redundant: cairn_tx_clobber also marks its range protected (tx.c mark_protected): its lines join the line set that TX_FLUSH_LINES flushes, or (256 B or more, while the tx holds fewer than 16 ranges; always over 4 KiB) the ranges that TX_FLUSH_BIG flushes; rt:clobber passes with it dropped") \
    M(42, TX_FLUSH_FRESH, drop, rt:commit, "tx.c flush_written: objects allocated in the transaction", "") \
    M(43, TX_MARK_NT, drop, rt:commit, "tx.c retire_log: the commit mark's NT stores", "") \
    M(44, TX_MARK_LINES, drop, rt:commit_msync, "tx.c retire_log: the commit mark, msync domain", "") \
    M(45, TX_MARK_DFENCE, drop, rt:commit, "tx.c retire_log: the dfence after the mark", "") \
    M(46, TX_DATA_FENCE, drop, corpus:commit_across_lines, "tx.c cairn_tx_commit: data before the mark", "") \
    M(47, TX_DATA_FENCE_MOVED, move, corpus:commit_across_lines, "tx.c cairn_tx_commit: that fence after the mark", "") \
    M(48, TX_NOLOG_DFENCE, drop, rt:clobber, "tx.c cairn_tx_commit: the dfence of a tx with no records", "") \
    M(49, TX_ABORT_OFENCE, drop, rt:abort, "tx.c cairn_tx_abort: restored data before retiring", "")

#define CAIRN_MUT_ENUM_(n, name, kind, workload, site, survivor) CAIRN_MUT_##name = n,
enum { CAIRN_MUTANT_TABLE(CAIRN_MUT_ENUM_) CAIRN_MUT_COUNT_ };

#ifdef CAIRN_MUTANT
#define CAIRN_MUTATED(name) (CAIRN_MUTANT == CAIRN_MUT_##name)
#else
#define CAIRN_MUTATED(name) 0
#endif

#endif
