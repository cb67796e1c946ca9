package trace_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// TestReadValid reads well-formed traces of every shape the format allows
// and checks each record field by field.
func TestReadValid(t *testing.T) {
	rec := func(ts time.Duration, op schema.Op, size int64, tier schema.Tier, key string, ph schema.Phase, req uint64, q schema.QoS) schema.Record {
		return schema.Record{Time: ts, Op: op, Size: size, Tier: tier, Key: []byte(key), Phase: ph, Request: req, QoS: q}
	}
	tests := []struct {
		name       string
		in         string
		want       []schema.Record
		hasReq     bool
		hasQoS     bool
		epoch      time.Time // zero for virtual time
		outOfOrder int64
		lines      int
	}{
		{
			name: "kvbench",
			in: lf(h8,
				"0.000000,Write,100,Tier-0,a,Prefill,1,interactive",
				"0.000250,Read,100,Tier-0,a,Decode,1,interactive",
				"1.5,Delete,100,Tier-2,a,Evict,,",
				"2,Write,0,Tier-1,b,Prefill,0,batch",
				"12.123456789,Read,9223372036854775807,Tier-2,ключ/日本,Decode,18446744073709551615,responsive"),
			want: []schema.Record{
				rec(0, schema.OpWrite, 100, schema.TierGPU, "a", schema.PhasePrefill, 1, schema.QoSInteractive),
				rec(250*time.Microsecond, schema.OpRead, 100, schema.TierGPU, "a", schema.PhaseDecode, 1, schema.QoSInteractive),
				rec(1500*time.Millisecond, schema.OpDelete, 100, schema.TierNVMe, "a", schema.PhaseEvict, 0, schema.QoSNone),
				rec(2*time.Second, schema.OpWrite, 0, schema.TierCPU, "b", schema.PhasePrefill, 0, schema.QoSBatch),
				rec(12123456789, schema.OpRead, math.MaxInt64, schema.TierNVMe, "ключ/日本", schema.PhaseDecode, math.MaxUint64, schema.QoSResponsive),
			},
			hasReq: true, hasQoS: true, lines: 6,
		},
		{
			name: "reference CRLF epoch out of order",
			in: crlf(h6,
				"1795255939.072664,Write,298188800,Tier-1,k,Prefill",
				"1795255939.072600,Read,298188800,Tier-1,k,Decode",
				"1795255940.000000,Read,298188800,Tier-2,k,Decode",
				"1795255939.5,Read,298188800,Tier-2,k,Evict"),
			want: []schema.Record{
				rec(0, schema.OpWrite, 298188800, schema.TierCPU, "k", schema.PhasePrefill, 0, 0),
				rec(-64*time.Microsecond, schema.OpRead, 298188800, schema.TierCPU, "k", schema.PhaseDecode, 0, 0),
				rec(927336*time.Microsecond, schema.OpRead, 298188800, schema.TierNVMe, "k", schema.PhaseDecode, 0, 0),
				rec(427336*time.Microsecond, schema.OpRead, 298188800, schema.TierNVMe, "k", schema.PhaseEvict, 0, 0),
			},
			epoch: time.Unix(1795255939, 72664000), outOfOrder: 2, lines: 5,
		},
		{
			name: "epoch threshold exactly",
			in:   lf(h6, "1000000000,Read,1,Tier-0,k,Decode", "1000000001.000001,Read,1,Tier-0,k,Decode"),
			want: []schema.Record{
				rec(0, schema.OpRead, 1, schema.TierGPU, "k", schema.PhaseDecode, 0, 0),
				rec(time.Second+time.Microsecond, schema.OpRead, 1, schema.TierGPU, "k", schema.PhaseDecode, 0, 0),
			},
			epoch: time.Unix(trace.EpochThreshold, 0), lines: 3,
		},
		{
			name: "virtual just below threshold",
			in:   lf(h6, "999999999.999999999,Read,1,Tier-0,k,Decode", "5,Read,1,Tier-0,k,Decode"),
			want: []schema.Record{
				rec(999999999999999999, schema.OpRead, 1, schema.TierGPU, "k", schema.PhaseDecode, 0, 0),
				rec(5*time.Second, schema.OpRead, 1, schema.TierGPU, "k", schema.PhaseDecode, 0, 0),
			},
			outOfOrder: 1, lines: 3,
		},
		{
			name: "columns by name, unknown columns ignored, blank lines skipped, BOM",
			in: "\xef\xbb\xbf" + hr + "\r\n\r\n" +
				rowR("Timestamp", "0.5") + "\r\n\n" +
				rowR("Request", "") + "\n" +
				rowR("QoS", "") + "\r\n",
			want: []schema.Record{
				rec(500*time.Millisecond, schema.OpRead, 7, schema.TierNVMe, "kr", schema.PhaseDecode, 9, schema.QoSBatch),
				rec(3500*time.Millisecond, schema.OpRead, 7, schema.TierNVMe, "kr", schema.PhaseDecode, 0, schema.QoSBatch),
				rec(3500*time.Millisecond, schema.OpRead, 7, schema.TierNVMe, "kr", schema.PhaseDecode, 9, schema.QoSNone),
			},
			hasReq: true, hasQoS: true, lines: 6,
		},
		{
			name: "header names trimmed, only QoS optional, no final newline",
			in:   " Key , Phase,QoS,Tier ,Operation,Object_Size_Bytes,Timestamp\nk,Evict,batch,Tier-1,Write,3,0.000001",
			want: []schema.Record{
				rec(time.Microsecond, schema.OpWrite, 3, schema.TierCPU, "k", schema.PhaseEvict, 0, schema.QoSBatch),
			},
			hasQoS: true, lines: 2,
		},
		{
			name: "header only",
			in:   h8 + "\r\n",
			want: nil, hasReq: true, hasQoS: true, lines: 1,
		},
		{
			name: "header without newline",
			in:   h6,
			want: nil, lines: 1,
		},
		{
			name: "leading zeros and nanoseconds",
			in:   lf(h6, "007.5,Read,0012,Tier-0,k,Decode", "0.000000001,Read,0,Tier-0,k,Decode"),
			want: []schema.Record{
				rec(7500*time.Millisecond, schema.OpRead, 12, schema.TierGPU, "k", schema.PhaseDecode, 0, 0),
				rec(1, schema.OpRead, 0, schema.TierGPU, "k", schema.PhaseDecode, 0, 0),
			},
			outOfOrder: 1, lines: 3,
		},
	}
	for _, tt := range tests {
		for _, z := range []bool{false, true} {
			name := tt.name
			in := []byte(tt.in)
			if z {
				name += "/zstd"
				in = compress(t, in)
			}
			t.Run(name, func(t *testing.T) {
				got, r := mustReadAll(t, bytes.NewReader(in))
				diffRecords(t, got, tt.want)
				if r.HasRequest() != tt.hasReq || r.HasQoS() != tt.hasQoS {
					t.Errorf("HasRequest, HasQoS = %v, %v; want %v, %v", r.HasRequest(), r.HasQoS(), tt.hasReq, tt.hasQoS)
				}
				if r.Compressed() != z {
					t.Errorf("Compressed() = %v, want %v", r.Compressed(), z)
				}
				ep, ok := r.Epoch()
				if ok != !tt.epoch.IsZero() || (ok && !ep.Equal(tt.epoch)) {
					t.Errorf("Epoch() = %v, %v; want %v", ep, ok, tt.epoch)
				}
				if r.OutOfOrder() != tt.outOfOrder {
					t.Errorf("OutOfOrder() = %d, want %d", r.OutOfOrder(), tt.outOfOrder)
				}
				if r.Rows() != int64(len(tt.want)) {
					t.Errorf("Rows() = %d, want %d", r.Rows(), len(tt.want))
				}
				if r.Line() != tt.lines {
					t.Errorf("Line() = %d, want %d", r.Line(), tt.lines)
				}
				// io.EOF is sticky too.
				var rec schema.Record
				if err := r.Read(&rec); err != io.EOF {
					t.Errorf("Read after EOF = %v, want io.EOF", err)
				}
			})
		}
	}
}

// TestReadReusesKey: Read reuses the capacity of rec.Key and overwrites
// every field, the optional ones included.
func TestReadReusesKey(t *testing.T) {
	in := lf(h8, "1,Write,5,Tier-1,a-long-key,Prefill,7,batch", "2,Read,6,Tier-2,b,Decode,,")
	r := trace.NewReader(strings.NewReader(in))
	rec := schema.Record{Key: make([]byte, 0, 64)}
	p := &rec.Key[:1][0]
	if err := r.Read(&rec); err != nil {
		t.Fatal(err)
	}
	if &rec.Key[0] != p {
		t.Errorf("Read allocated a new Key despite enough capacity")
	}
	if err := r.Read(&rec); err != nil {
		t.Fatal(err)
	}
	want := schema.Record{Time: 2 * time.Second, Op: schema.OpRead, Size: 6, Tier: schema.TierNVMe, Key: []byte("b"), Phase: schema.PhaseDecode}
	if !recordsEqual(&rec, &want) {
		t.Errorf("second record = %s, want %s", rec.String(), want.String())
	}
}

// TestHeaderBeforeRead: Header reads the header without consuming a row.
func TestHeaderBeforeRead(t *testing.T) {
	r := trace.NewReader(strings.NewReader(lf(hr, rowR("Key", "x"))))
	if r.HasRequest() || r.HasQoS() {
		t.Errorf("HasRequest or HasQoS true before the header is read")
	}
	hdr, err := r.Header()
	if err != nil || !slices.Equal(hdr, strings.Split(hr, ",")) {
		t.Fatalf("Header() = %q, %v", hdr, err)
	}
	if !r.HasRequest() || !r.HasQoS() {
		t.Errorf("HasRequest, HasQoS = %v, %v after Header", r.HasRequest(), r.HasQoS())
	}
	var rec schema.Record
	if err := r.Read(&rec); err != nil || string(rec.Key) != "x" {
		t.Fatalf("Read = %s, %v", rec.String(), err)
	}
	if hdr2, _ := r.Header(); !slices.Equal(hdr2, hdr) {
		t.Errorf("Header() after Read = %q", hdr2)
	}
}

// TestValidKeys: keys the format allows read back as they are.
func TestValidKeys(t *testing.T) {
	for _, key := range []string{"k", "conv_user_0001_1795255939067_turn_1", "a/b:c;d|e", "ключ", "日本語", "\U0001F600", "\uFFFD", "x'y", "\u200b"} {
		got, _ := mustReadAll(t, strings.NewReader(lf(h6, row6(5, key))))
		if len(got) != 1 || string(got[0].Key) != key {
			t.Errorf("key %q read as %v", key, got)
		}
	}
}

// TestMaxSize bounds Object_Size_Bytes: a size above MaxSize is a
// *ParseError at its line and column; MaxSize itself and anything when
// MaxSize is 0 read as usual.
func TestMaxSize(t *testing.T) {
	const hdr = "Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n"
	for _, tt := range []struct {
		max  int64
		size string
		ok   bool
	}{
		{0, "9223372036854775807", true},
		{4096, "4096", true},
		{4096, "4097", false},
		{1 << 50, "9223372036854775807", false},
	} {
		r := trace.NewReader(strings.NewReader(hdr + "0.0,Write,1,Tier-2,a,Prefill\n0.1,Write," + tt.size + ",Tier-2,b,Prefill\n"))
		r.Name = "big.csv"
		r.MaxSize = tt.max
		recs, err := readRecords(t, r)
		if tt.ok {
			if err != io.EOF || len(recs) != 2 {
				t.Errorf("MaxSize %d, size %s: %d records, %v", tt.max, tt.size, len(recs), err)
			}
			continue
		}
		pe := asParseError(t, err)
		if !errors.Is(err, trace.ErrSizeTooLarge) || pe.Line != 3 || pe.Column != 3 || pe.Name != "Object_Size_Bytes" || pe.Value != tt.size {
			t.Errorf("MaxSize %d, size %s: %v", tt.max, tt.size, err)
		}
		if want := `trace: big.csv:3: column 3 (Object_Size_Bytes): "` + tt.size + `": size too large`; !strings.HasPrefix(err.Error(), want) {
			t.Errorf("message %q, want it to start %q", err, want)
		}
	}
}

// TestUserAndTokens reads the User and Tokens columns, in any position,
// and a trace without them (every earlier kvbench trace) as User 0.
func TestUserAndTokens(t *testing.T) {
	in := lf("Tokens,Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase,Request,QoS,User",
		"120,0.5,Write,4096,Tier-2,k1,Prefill,7,batch,3",
		",0.6,Read,4096,Tier-2,k1,Decode,,,")
	got, r := mustReadAll(t, strings.NewReader(in))
	if !r.HasUser() || !r.HasTokens() {
		t.Errorf("HasUser, HasTokens = %v, %v; want true", r.HasUser(), r.HasTokens())
	}
	if len(got) != 2 || got[0].User != 3 || got[0].Tokens != 120 || got[0].Request != 7 || got[1].User != 0 || got[1].Tokens != 0 {
		t.Errorf("records %v", got)
	}
	old, r := mustReadAll(t, strings.NewReader(lf(h8, g8)))
	if r.HasUser() || r.HasTokens() || old[0].User != 0 {
		t.Errorf("a trace without the columns: HasUser %v, HasTokens %v, %v", r.HasUser(), r.HasTokens(), old)
	}
}

// TestReadSkippableFrameFirst reads a zstd stream that starts with a
// skippable frame, as pzstd writes each of its frames (a 12-byte skippable
// frame holding the next frame's size, then the frame): zstd -d reads it,
// and the Reader took it for plain text ("column 1: ... quoted field").
func TestReadSkippableFrameFirst(t *testing.T) {
	plain := "Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\r\n" +
		"1700000000.000000,Write,4096,Tier-1,k1,Prefill\r\n1700000000.500000,Read,4096,Tier-1,k1,Decode\r\n"
	frame := compress(t, []byte(plain))
	for _, magic := range []byte{0x50, 0x5f} {
		skip := []byte{magic, 0x2a, 0x4d, 0x18, 4, 0, 0, 0}
		skip = binary.LittleEndian.AppendUint32(skip, uint32(len(frame)))
		recs, r := mustReadAll(t, bytes.NewReader(append(skip, frame...)))
		if len(recs) != 2 || !r.Compressed() || recs[1].Time != 500*time.Millisecond {
			t.Errorf("magic %#x: %d records, compressed %v, %+v", magic, len(recs), r.Compressed(), recs)
		}
	}
}
