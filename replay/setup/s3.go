package setup

import (
	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/outfile"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/s3"
	"github.com/kvbench/kvbench/schema"
)

// S3Config is the s3 tier's: endpoint, bucket and prefix (--s3-endpoint,
// --s3-bucket, --s3-prefix), requests in flight and part size. Credentials
// and region come from the AWS environment and configuration chain, never
// from here.
type S3Config = s3.Config

// newS3 makes the s3 tier: a prefix of the run's own in the bucket,
// checked with two requests before any I/O (the bucket exists, the
// credentials are accepted, the prefix holds no object and no unfinished
// multipart upload, which the clean-up would abort), removed at the end
// unless --keep, and then printed, with the command that removes it.
// What the clean-up could not remove is a warning of the result's.
func newS3(b *builder) (backend.Backend, error) {
	cfg := b.opts.S3
	cfg.Keep = b.opts.Keep
	cfg.Warn = b.warn
	s, err := s3.New(b.ctx, cfg) // validates cfg (s3.Config.Validate)
	if s3.IsInput(err) {
		return nil, cli.Input(err) // a flag, bucket, endpoint or credentials to change
	}
	if err != nil {
		return nil, err
	}
	b.where(schema.PathInfo{Backend: "s3"})
	// Until its Close, which removes them (or says what it could not), a
	// tool stopped at once names them.
	what := "the run's objects and unfinished uploads (remove the objects with: " + s.RemoveCommand() + ")"
	if cfg.Keep {
		what = "the run's objects (--keep) and unfinished uploads"
	}
	untrack := outfile.Track(b.ctx, outfile.Leftover{Path: s.Where(), What: what, Remote: true})
	b.after(func() {
		untrack()
		if cfg.Keep {
			b.print("--keep: the S3 tier's objects are kept under " + s.Where() + " (remove them with: " + s.RemoveCommand() + ")")
		}
	})
	return s, nil
}
