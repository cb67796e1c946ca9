package reqtrace

import (
	"bytes"
	"io"
	"testing"
)

// BenchmarkReaders reads each fixture from memory, reporting requests per
// second.
func BenchmarkReaders(b *testing.B) {
	for _, tc := range []struct {
		file string
		f    Format
	}{
		{"burstgpt_1_head30.csv", FormatBurstGPT},
		{"sharegpt_sample50.json", FormatShareGPT},
		{"mooncake_head200.jsonl", FormatMooncake},
		{"azure_code_head200.csv", FormatAzure},
	} {
		b.Run(tc.f.String(), func(b *testing.B) {
			data := fixture(b, tc.file)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var n int
			var req Request
			for b.Loop() {
				r, err := NewReader(bytes.NewReader(data), tc.f, Options{})
				if err != nil {
					b.Fatal(err)
				}
				for {
					if err := r.Next(&req); err != nil {
						if err != io.EOF {
							b.Fatal(err)
						}
						break
					}
					n++
				}
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "requests/s")
		})
	}
}
