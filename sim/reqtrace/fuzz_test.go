package reqtrace

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"testing/iotest"
)

// The fuzz tests hold every Reader to the same contract whatever the
// bytes: no panic, no error but io.EOF or a *ParseError, the invariants of
// Request, and the same requests and error whether the input comes at once
// or a byte at a time. Inputs that once failed live in testdata/fuzz/.

func FuzzBurstGPT(f *testing.F) {
	f.Add(fixture(f, "burstgpt_1_head30.csv"))
	f.Add([]byte("Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type\r\n1.5,s,0.1,ChatGPT,1,2,3,x\r\n0.5,s,0.1,ChatGPT,1,2,3,x"))
	f.Add([]byte("Request tokens,Response tokens\n\"1\",2\nx,y\n3"))
	f.Add([]byte("Timestamp,Request tokens,Response tokens\n1e3,1,1\n-1,2,2\n\"4,1,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, data, FormatBurstGPT) })
}

func FuzzShareGPT(f *testing.F) {
	f.Add([]byte("[" + conv(`"a"`, "human:hello there", "gpt:hi", "human:x", "gpt:y") + "]"))
	f.Add([]byte("[" + conv("-", "gpt:a", "human:b") + ",\n" + conv("7", "system:s", "human:h", "gpt:g") + ", null]"))
	f.Add([]byte(`[{"id": "", "conversations": [{"from": "human", "value": "\ud83d\ude00\u00e9"}, {"from": "gpt", "value": "\ud800"}]}] `))
	f.Add([]byte(`[{"conversations": {}}]`))
	f.Add([]byte("\ufeff[]"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, data, FormatShareGPT) })
}

func FuzzMooncake(f *testing.F) {
	head := fixture(f, "mooncake_head200.jsonl")
	f.Add(head[:bytes.Index(head, []byte("\n{\"timestamp\": 0, \"input_length\": 6760"))+1])
	f.Add([]byte(`{"timestamp": 1.5, "input_length": 0, "output_length": 1, "hash_ids": []}` + "\r\n\n" + `{"timestamp": 0, "input_length": 513, "output_length": 1, "hash_ids": [1, -2]}`))
	f.Add([]byte(`{"timestamp": 1, "input_length": 1025, "output_length": 1, "hash_ids": [1, 2]}`))
	f.Add([]byte(`{"timestamp": "1", "input_length": null, "hash_ids": [[1]]}`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, data, FormatMooncake) })
}

func FuzzAzure(f *testing.F) {
	head := fixture(f, "azure_code_head200.csv")
	f.Add(head[:bytes.Index(head, []byte("2023-11-16 18:17:04.6785310"))])
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n2024-05-10 00:00:00.009930+00:00,2048,28\n2024-05-10T00:00:01Z,1,1"))
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n0001-01-01 00:00:00,1,1\n9999-12-31 23:59:59.999999999,1,1\n"))
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n\"2023-11-16 18:17:04\",1,\"2\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, data, FormatAzure) })
}

func FuzzDetect(f *testing.F) {
	for _, name := range []string{"burstgpt_1_head30.csv", "sharegpt_sample50.json", "mooncake_head200.jsonl", "azure_code_head200.csv"} {
		b := fixture(f, name)
		f.Add(b[:min(len(b), 1024)])
	}
	f.Add([]byte(""))
	f.Add([]byte("\ufeff \n{\"a\": 1}"))
	f.Add([]byte("TIMESTAMP,ContextTokens\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Detect(data)
		if len(data) > detectBytes {
			// NewReader looks at no more than that.
			got, err = Detect(data[:detectBytes])
		}
		checkErrorClass(t, err)
		if err != nil && got != FormatAuto {
			t.Fatalf("Detect = %v with error %v", got, err)
		}
		if err == nil && (got < FormatBurstGPT || got > FormatAzure) {
			t.Fatalf("Detect = %v", got)
		}
		// NewReader with FormatAuto picks the same format, or fails the
		// same way.
		r, nerr := NewReader(bytes.NewReader(data), FormatAuto, Options{})
		if err != nil {
			if nerr == nil || nerr.Error() != err.Error() {
				t.Fatalf("Detect: %v; NewReader: %v", err, nerr)
			}
			return
		}
		checkErrorClass(t, nerr)
		if nerr == nil {
			if rf := r.(interface{ format() Format }).format(); rf != got {
				t.Fatalf("Detect = %v, NewReader read %v", got, rf)
			}
		}
	})
}

// fuzzReader reads data in format f twice, at once and a byte at a time,
// checking the contract on the way.
func fuzzReader(t *testing.T, data []byte, f Format) {
	whole, werr := fuzzRead(t, bytes.NewReader(data), f, len(data))
	bytewise, berr := fuzzRead(t, iotest.OneByteReader(bytes.NewReader(data)), f, len(data))
	if fmt.Sprint(werr) != fmt.Sprint(berr) {
		t.Fatalf("at once: %v\na byte at a time: %v", werr, berr)
	}
	if !reflect.DeepEqual(whole, bytewise) {
		t.Fatalf("at once %d requests, a byte at a time %d, or different ones", len(whole), len(bytewise))
	}
}

func fuzzRead(t *testing.T, src interface{ Read([]byte) (int, error) }, f Format, size int) ([]Request, error) {
	r, err := NewReader(src, f, Options{Name: "fuzz"})
	checkErrorClass(t, err)
	if err != nil {
		if r != nil {
			t.Fatal("NewReader returned a Reader with an error")
		}
		return nil, err
	}
	var out []Request
	var prev Request
	for {
		var req Request
		err := r.Next(&req)
		checkErrorClass(t, err)
		if err != nil {
			if err2 := r.Next(&Request{}); err2 != err {
				t.Fatalf("error %v not sticky: then %v", err, err2)
			}
			var pe *ParseError
			if errors.As(err, &pe) && pe.File != "fuzz" {
				t.Fatalf("error %v does not name the input", err)
			}
			checkSkips(t, r)
			return out, err
		}
		checkRequest(t, f, req, prev, len(out) == 0)
		prev = req
		out = append(out, req)
		if len(out) > size+1 {
			t.Fatalf("%d requests from %d bytes", len(out), size)
		}
	}
}

func checkRequest(t *testing.T, f Format, req, prev Request, first bool) {
	t.Helper()
	if req.InputTokens < 0 || req.OutputTokens < 0 {
		t.Fatalf("negative tokens: %+v", req)
	}
	if req.Arrival < 0 || !first && req.Arrival < prev.Arrival || first && req.Arrival != 0 {
		t.Fatalf("arrival %v after %v (first %v)", req.Arrival, prev.Arrival, first)
	}
	switch f {
	case FormatMooncake:
		n := len(req.HashIDs)
		if n > req.InputTokens || n == 0 && req.InputTokens > 0 {
			t.Fatalf("%d hash ids for %d tokens", n, req.InputTokens)
		}
		fit := n > 0 && n == (req.InputTokens+MooncakeBlockTokens-1)/MooncakeBlockTokens
		if fit && req.BlockTokens != MooncakeBlockTokens || !fit && req.BlockTokens != 0 {
			t.Fatalf("%d hash ids for %d tokens: BlockTokens %d", n, req.InputTokens, req.BlockTokens)
		}
	case FormatShareGPT:
		if req.Arrival != 0 || req.Turn < 1 || req.Conversation == "" ||
			req.InputTokens < 1 || req.InputTokens > ShareGPTMaxInputTokens ||
			req.OutputTokens < 1 || req.OutputTokens > ShareGPTMaxOutputTokens {
			t.Fatalf("ShareGPT request %+v", req)
		}
	default:
		if req.HashIDs != nil || req.Conversation != "" || req.Turn != 0 {
			t.Fatalf("%v request %+v", f, req)
		}
	}
}

func checkSkips(t *testing.T, r Reader) {
	s, ok := r.(Skipper)
	if !ok {
		return
	}
	if int64(len(s.SkipErrors())) != min(s.Skipped(), MaxSkipErrors) {
		t.Fatalf("Skipped %d with %d reasons", s.Skipped(), len(s.SkipErrors()))
	}
	for _, err := range s.SkipErrors() {
		checkErrorClass(t, err)
	}
}
