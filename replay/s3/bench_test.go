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
					if err := be.Put(ctx, benchKey(name, n.Add(1)-1), bytes.NewReader(data), size); err != nil {
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
			if n.Load() == 0 {
				b.Fatal("no object was put to get")
			}
			b.RunParallel(func(pb *testing.PB) {
				p := make([]byte, size)
				for pb.Next() {
					key := benchKey(name, (k.Add(1)-1)%min(n.Load(), benchKeys))
					if _, err := be.GetRange(ctx, key, p, 0); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// benchKeys is how many distinct objects BenchmarkPutGet's puts cycle
// through, and its gets read.
const benchKeys = 64

// benchKey names the i-th object a put writes (from 0): the puts write
// keys 0 to min(puts, benchKeys)-1, which are the keys the gets read.
func benchKey(name string, i int64) string {
	return fmt.Sprintf("%s-%d", name, i%benchKeys)
}
