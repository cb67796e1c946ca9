package s3

// SetUploadsPage makes ListMultipartUploads ask for n uploads a page, for
// the test; the returned function puts it back.
func SetUploadsPage(n int32) func() {
	old := uploadsPage
	uploadsPage = n
	return func() { uploadsPage = old }
}
