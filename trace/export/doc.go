// Package export owns the conversion of kvbench traces into the inputs of
// other storage benchmarks: fio iolog version 3 logs with the fio job file
// that replays them (Fio), and the tab-separated op-log that sai3-bench
// replays and warp's tools read (Sai3). Each exporter streams the trace once
// and keeps state only per live object, never per row.
//
// # fio
//
// Fio writes, for every exported tier, an iolog and one or two sections of a
// job file. An iolog starts with the line "fio version 3 iolog" and has one
// line per file action or I/O:
//
//	<usec> <file> add|open|close
//	<usec> <file> read|write <offset> <length>
//
// Timestamps are microseconds from the first row of the trace, which is at
// 1: fio delays each line by the time since the line before it, but never
// the first and never one after a line stamped 0. Every log starts with a
// file action at 1, so its I/O waits as the trace's rows do. A row earlier
// than the row before it (reference traces have a few) takes that row's
// timestamp, so timestamps never decrease. Every object operation is split
// into I/Os of at most BlockSize bytes, in offset order, as kvreplay splits
// it. Sizes are scaled and aligned as kvreplay does: the scaled size is
// truncated to whole bytes and rounded up to FioOptions.Align, 4096 by
// default. kvreplay takes its alignment from the drive (4096, or the
// larger direct-I/O alignment of the file system or logical block size of
// the device): Align must be that, for the drive under test, for the job
// to size and place objects as kvreplay does there (kvtrace export takes
// it from Dir's file system when that is on its machine). kvreplay's
// --block-size splits I/O and places nothing.
//
// Several of kvreplay's defaults are not the job's (its layout is dir,
// its pace the trace's, and it replays every tier, Tier-1 in RAM), so a
// job is only an anchor for the kvreplay run of the same options:
// FioOptions.Kvreplay gives them, and the job file's header names that
// command line, with what of the job no kvreplay option gives. Neither
// syncs: kvreplay fdatasyncs only with --fsync. Neither trims: kvreplay's
// extent layout frees a deleted object's extent in memory, as the job's
// allocator does; its dir layout unlinks the object's file, which an
// iolog cannot (a note says so).
//
// Rows act on objects by the rules of kvreplay's engine (replay/model.go,
// apply), so that fio does the I/O kvreplay does. A key lives on one tier
// at a time. A Write puts the object on its tier, replacing the copy there
// (the old extent is freed first) and dropping the copy it leaves on
// another tier (the Evict Write of a demotion drops the source of its Evict
// Read); a Delete drops it. A Read reads the object where it is, as big as
// it is (FioStats.Mismatched counts reads whose row names another tier). A
// Read of a key on no tier is a cold read, as in decode-only traces: the
// object is put on the read's tier at that read, as kvreplay does with a
// trace on a pipe, or before the first row when FioOptions.Cold lists it,
// as kvreplay does after its prescan of a trace file (ColdObjects).
//
// FioSize returns what Fio would and the bytes it would write, counting
// the iologs' lines without formatting them (an object operation's lines
// at once, whatever their number), so that an export is sized, and one
// that does not fit refused, in the time its trace takes to read;
// FioSizeCold also finds the trace's cold objects in that read.
//
// Objects are placed by Layout:
//
//   - "extent" (the default): each tier is one file (Tier-2's is
//     Dir/kvbench.extent, the file kvreplay --layout extent makes in its
//     run directory, --dir/kvreplay-PID-RANDOM), and objects are extents
//     of it placed by internal/extent, first fit by address with Align:
//     the offsets kvreplay's extent layout gives when it applies the rows
//     in trace order (kvreplay runs rows of different keys concurrently,
//     so its frees and allocations may come in another order).
//   - "dir": one file per object and tier, all in Dir, named as kvreplay's
//     NVMe directory backend names them in its run directory: the engine
//     names a key's copy on Tier-N "N_" and the key
//     (internal/objname.ObjectName), and the backend escapes that
//     (objname.FileName): bytes outside [A-Za-z0-9._-] become %XX, so
//     names hold no whitespace. Tier-2's key k is the file Dir/2_k, where
//     kvreplay --layout dir puts it; Tier-1's is Dir/1_k, where kvreplay
//     puts it when Tier-1 is on the NVMe tier too (--tier-map
//     Tier-1=nvme). Distinct keys and tiers get distinct names, so no
//     object's file is another's. Dropping an object closes its file:
//     iologs cannot remove files.
//
// What real fio (3.31 and later; tested with 3.33) needs, and how the job
// file gives it:
//
//   - Every read must find data. fio does not order a read after the write
//     it depends on (iodepth I/Os are in flight at once), and a read past
//     the end of a file comes back short, uncounted and without an error.
//     So the job lays out every file before the replay: in the extent
//     layout a "prep" job writes the whole tier file (its extent high-water
//     mark rounded up to BlockSize) sequentially; in the dir layout a prep
//     iolog writes every object's file in full the first time the trace
//     names the object. The prep jobs run first; the replay jobs start
//     after them (stonewall), so cold reads read written data and no read
//     is short. Regions read before the trace writes them hold the prep
//     job's bytes, which is what kvreplay's untimed preparation of cold
//     objects gives too.
//   - fio creates the directory of a job's filename= but not that of a file
//     an iolog adds; the dir layout's first job ("mkdir") creates Dir
//     through a filename= that it then unlinks.
//   - With an asynchronous engine fio leaves out of its statistics the
//     I/Os still in flight when a replay job reaches the end of its iolog
//     (fio's end-of-job reap returns nothing once the log is exhausted).
//     Each replay job therefore sets io_size to exactly the bytes its iolog
//     moves, and no iolog ends with a file action (closes are written only
//     before a later line), so fio stops the job on that byte count, reaps
//     everything and reports every byte.
//   - fio's parser reads a file name of at most 256 bytes without
//     whitespace and a length below 4 GiB; Validate and Fio enforce both.
//   - fio holds a whole iolog in memory (about 100 bytes a line) unless told
//     to read it in chunks: an asap replay log, or a prep log, of more than
//     2^20 I/Os gets read_iolog_chunked=1. A timed one does not: fio
//     fetches the next chunk by the lines the job consumed in the last
//     second, gets none when they come slower, and ends the job early
//     without an error.
//
// The job tunes fio as its experts tune it where that is safe on any Linux
// machine with fio 3.x, and its header says what it leaves out and why. On
// an asynchronous engine (io_uring, libaio, posixaio) fio reaps completions
// up to iodepth at once (iodepth_batch_complete_max) and, in an asap job,
// submits up to iodepth at once (iodepth_batch_submit); a timed job does
// not batch submissions, for fio times a line's wait from the last
// submission, which batching holds back, and stops waiting. Two tunings
// need the machine's consent and are options: huge-page buffers
// (FioOptions.IOMem shmhuge or mmaphuge: fio fails without the huge pages
// reserved, which the header counts) and io_uring's registered buffers
// (FixedBufs: they pin iodepth blocks a job, which fails, ENOMEM, past
// RLIMIT_MEMLOCK for a user without CAP_IPC_LOCK). fio refuses io_uring's
// registerfiles, which sqthread_poll needs, for a job whose files an iolog
// opens; neither is set.
//
// # sai3-bench
//
// Sai3 writes the 13 tab-separated columns of the s3dlio op-log (sai3-bench
// 0.8 and s3dlio 0.9.22 and later), the common subset of warp's per-op
// output:
//
//	idx thread op client_id n_objects bytes endpoint file error start first_byte end duration_ns
//
// one row per object operation: Read is GET, Write is PUT, Delete is
// DELETE (with 0 bytes). thread is the row's Request (0 without one), so
// that a request's operations can be grouped. endpoint is the configured prefix (such as s3://bucket/ or
// file:///mnt/kv/) and file the trace's key, so the object's URI is their
// concatenation, as sai3-bench forms it, and sai3-bench replay --target
// swaps the prefix. start is an absolute RFC 3339 time with nanoseconds
// (the reader silently replaces an unparseable time with the current time,
// so the format is fixed): the trace's own epoch for reference traces,
// otherwise a configurable base plus the row's virtual time. A trace has no
// latencies, so first_byte, end and duration_ns are empty.
package export
