package host

// DirectIO is what direct I/O finds in a directory: the facts kvreplay's
// NVMe tier probes its directory for before it sizes and places objects
// there (replay/nvme), for a tool that writes I/O for another program to
// do there (kvtrace export's fio job).
type DirectIO struct {
	// Known: the probe ran (a file could be made in the directory), and
	// Align is the file system's.
	Known bool
	// FileSystem is the type of the directory's file system ("ext4",
	// "tmpfs"); "" when unknown.
	FileSystem string
	// Align is the alignment direct I/O there needs: DefaultDirectAlign,
	// or the larger memory or offset alignment that statx
	// (STATX_DIOALIGN) reports for a file there.
	Align int64
	// Refused: the file system refuses O_DIRECT (EINVAL when a file is
	// opened with it, or at an aligned write); false where that is not
	// known.
	Refused bool
}

// DefaultDirectAlign is the alignment of direct I/O where nothing larger
// is found: 4 KiB, the logical block of the drives kvbench measures.
const DefaultDirectAlign = 4096
