package s3_test

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/kvbench/kvbench/replay/replaytest"
	"github.com/kvbench/kvbench/replay/s3"
	"github.com/kvbench/kvbench/replay/s3/s3test"
)

// BenchmarkPutGet measures the tier's whole-object PUT and GET against a
// versitygw on this machine (started by the benchmark, keep-alive on), at
// the object sizes of kvbench's traces at their usual scales, 16 requests
// in flight: go test -run '^$' -bench PutGet -benchmem ./replay/s3
func BenchmarkPutGet(b *testing.B) {
	srv := s3test.Start(b, s3test.Options{KeepAlive: true})
	srv.Env(b)
	srv.Bucket(b, bucket)
	be, err := s3.New(context.Background(), s3.Config{Endpoint: srv.Endpoint, Bucket: bucket, Concurrency: 16})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	ctx := context.Background()
	for _, size := range []int64{256 << 10, 1 << 20, 4 << 20, 16 << 20} {
		data := make([]byte, size)
		replaytest.Fill(data, uint64(size), 0)
		name := fmt.Sprintf("%dKiB", size>>10)
		var n atomic.Int64
		b.Run("put/"+name, func(b *testing.B) {
			b.SetBytes(size)
			b.SetParallelism(8) // 16 goroutines on 2 cores
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := be.Put(ctx, fmt.Sprintf("%s-%d", name, n.Add(1)%64), bytes.NewReader(data), size); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		b.Run("get/"+name, func(b *testing.B) {
			b.SetBytes(size)
			b.SetParallelism(8)
			var k atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				p := make([]byte, size)
				for pb.Next() {
					key := fmt.Sprintf("%s-%d", name, k.Add(1)%min(n.Load(), 64))
					if _, err := be.GetRange(ctx, key, p, 0); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
