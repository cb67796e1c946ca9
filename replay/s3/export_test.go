package s3

// SetUploadsPage makes ListMultipartUploads ask for n uploads a page, for
// the test; the returned function puts it back.
func SetUploadsPage(n int32) func() {
	old := uploadsPage
	uploadsPage = n
	return func() { uploadsPage = old }
}

// PartsHeld is the bytes of part buffers out and the parts on their way
// up, for the test.
func PartsHeld(b *Backend) (int64, int) {
	b.parts.mu.Lock()
	defer b.parts.mu.Unlock()
	return b.parts.held, b.parts.pending
}

// PartsPeak is the most bytes of part buffers out at once.
func PartsPeak(b *Backend) int64 {
	b.parts.mu.Lock()
	defer b.parts.mu.Unlock()
	return b.parts.peak
}
