/*
 * spill.h - the trace processor's arrays in temporary files, for imports
 * whose resident memory must not grow with the trace (spill.c).
 *
 * An import keeps every row, index and sorted entry of a trace: 1.6 bytes
 * of state a byte of trace. While spilling is on (gp__tp_spill_begin), the
 * big arrays of util.c (64 KiB and up: vectors, scratch arrays, hash maps,
 * the string arena) are shared mappings of unlinked files in a directory
 * on disk instead of anonymous memory, and a watcher thread hands their
 * resident pages back (madvise MADV_DONTNEED) whenever the process holds
 * more than a few MiB of them: their contents stay in the file, and a
 * later access reads them back from the page cache, or from the disk once
 * the kernel has reclaimed them. Nothing else changes: the same code
 * makes the same rows, only where the bytes live differs.
 *
 * The trace file's own mapping is watched the same way: its pages read
 * again from the file.
 */
#ifndef GPUPERF_TP_SPILL_H
#define GPUPERF_TP_SPILL_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Turns spilling on (nested calls count): new big arrays go to files in
 * dir (NULL: $TMPDIR, else /var/tmp), and a watcher keeps the resident
 * pages of spilled arrays and watched mappings under about keep bytes.
 * Returns 0, or -errno if dir cannot hold a temporary file (nothing
 * changed).
 */
int gp__tp_spill_begin(const char *dir, size_t keep);

/* Undoes one gp__tp_spill_begin. Arrays already spilled stay in their
 * files until freed. */
void gp__tp_spill_end(void);

/*
 * Called from the importer's busiest paths (hash maps, growing arrays):
 * now and then, checks the resident pages as the watcher does, and drops
 * them if there are too many. The watcher alone lags where the machine is
 * busy; this bounds what the importing thread adds meanwhile. Cheap when
 * spilling is off.
 */
void gp__tp_spill_poll(void);

/* How many times the resident pages were dropped so far (for tests). */
unsigned long gp__tp_spill_drops(void);

/* Whether new big arrays are spilled now. */
bool gp__tp_spill_on(void);

/*
 * A new zeroed shared mapping of len bytes (whole pages) in a file of its
 * own, with its blocks allocated (so that a full disk fails here, not as
 * SIGBUS on a later write). MAP_FAILED if the file or mapping cannot be
 * made.
 */
void *gp__tp_spill_map(size_t len);

/*
 * Whether p is a spilled mapping; if so, resizes it to new_len bytes
 * (the file with it), moving it if it must, into *out (MAP_FAILED, the
 * mapping unchanged, on failure).
 */
bool gp__tp_spill_remap(void *p, size_t new_len, void **out);

/* Whether p is a spilled mapping; if so, unmaps it and deletes its file. */
bool gp__tp_spill_unmap(void *p);

/* Whether p is a spilled mapping; if so, frees the file's blocks of the
 * whole pages of [off, off + len) of it, which then read as zero. */
bool gp__tp_spill_punch(void *p, size_t off, size_t len);

/* Watches (or stops watching) a read-only mapping of a file: its
 * resident pages are handed back with the spilled arrays'. */
void gp__tp_spill_watch(const void *p, size_t len);
void gp__tp_spill_unwatch(const void *p);

#endif /* GPUPERF_TP_SPILL_H */
