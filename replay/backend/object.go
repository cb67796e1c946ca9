package backend

import (
	"context"
	"io"
)

// ObjectStore is the optional capability of a Backend that stores whole
// objects rather than blocks at offsets: an object store such as S3, where
// an object is written at once (a PUT, in parts for a large one), read
// whole or by byte range (a GET, with a Range for part of it) and deleted
// by name. It is found by type assertion on the Backend.
//
// An engine that finds it writes an object with one Put instead of an
// Open and a WriteAt per block, reads it with Get (the whole object) or
// GetRange (the blocks a read asks for), and frees it with Delete. Such a
// backend need not serve Open: it may fail it with errors.ErrUnsupported.
//
// Keys and sizes are the engine's, as for Open: size is the object's
// physical size, a multiple of Caps().Align (an object store declares 1:
// any size). ctx carries the run's end (a signal, the --duration window)
// to the requests in flight. Every method is safe for concurrent use on
// different keys; the engine never runs two of them on one key at once.
//
// Errors are the contract's: ErrNotFound for an object that does not
// exist, ErrNoSpace for a full store, ErrClosed after Close; a store's own
// failures (a throttling response, a lost connection) are wrapped with
// the operation and key, and never carry credentials.
type ObjectStore interface {
	Backend
	// Put stores the object key of size bytes, read from r at offsets 0
	// to size, replacing any object of that name. r's ReadAt may be
	// called concurrently on different ranges (a store that uploads in
	// parts reads them at once).
	Put(ctx context.Context, key string, r io.ReaderAt, size int64) error
	// Get reads the whole object key, of size bytes, into w at the same
	// offsets; w's WriteAt may be called concurrently on different ranges
	// (a store that downloads in parts). ErrNotFound when there is no such
	// object.
	Get(ctx context.Context, key string, w io.WriterAt, size int64) error
	// GetRange reads len(p) bytes of the object key at off into p (a
	// ranged GET), and returns how many it read: io.EOF with fewer where
	// the object ends first, as io.ReaderAt does. ErrNotFound when there
	// is no such object.
	GetRange(ctx context.Context, key string, p []byte, off int64) (int, error)
	// Delete removes the object key and frees its space. An object that
	// does not exist is not an error (as an object store's DELETE).
	Delete(ctx context.Context, key string) error
}
