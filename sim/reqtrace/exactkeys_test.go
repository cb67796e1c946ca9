package reqtrace

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// TestKeysExact: the JSON readers match keys exactly, as Python's json
// does for the reference's ShareGPT loader and Mooncake's tools.
// encoding/json alone read "INPUT_LENGTH" into input_length (and, given
// both, took the last), and "Conversations" or a "timeſtamp" with a long s
// as the field: the workload then differed from the reference's on the
// same file. Such a key, or a key given twice, is refused with its line;
// keys that name no field are still ignored.
func TestKeysExact(t *testing.T) {
	const line = `{"timestamp": 0, "input_length": 512, "output_length": 3, "hash_ids": [5]}`
	conv := func(body string) string { return `[{"id": "a", "conversations": [` + body + `]}]` }
	const turns = `{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}`
	for _, tc := range []struct {
		name   string
		format Format
		in     string
		want   string // "" for no error
	}{
		{"mooncake exact, extra key", FormatMooncake, strings.Replace(line, "}", `, "Extra": 1}`, 1), ""},
		{"mooncake case", FormatMooncake, "\n" + strings.Replace(line, `"input_length"`, `"INPUT_LENGTH"`, 1), `line 2: INPUT_LENGTH: "INPUT_LENGTH": malformed json: want "input_length": keys are matched exactly`},
		{"mooncake both cases", FormatMooncake, strings.Replace(line, "}", `, "Input_Length": 99999}`, 1), `"Input_Length": malformed json: want "input_length": keys are matched exactly`},
		{"mooncake long s", FormatMooncake, strings.Replace(line, `"timestamp"`, `"timeſtamp"`, 1), `"timeſtamp": malformed json: want "timestamp": keys are matched exactly`},
		{"mooncake twice", FormatMooncake, strings.Replace(line, "}", `, "input_length": 7}`, 1), `input_length: "input_length": malformed json: given twice in one object`},
		{"sharegpt exact", FormatShareGPT, conv(turns), ""},
		{"sharegpt case", FormatShareGPT, `[{"id": "a", "Conversations": [` + turns + `]}]`, `"Conversations": malformed json: want "conversations": keys are matched exactly`},
		{"sharegpt turn key", FormatShareGPT, conv("\n" + `{"FROM": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}`), `line 2: conversations[0].FROM: "FROM": malformed json: want "from": keys are matched exactly`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAllErr(newReader(t, tc.in, tc.format, Options{}))
			if tc.want == "" {
				if err != io.EOF {
					t.Fatalf("error %v", err)
				}
				return
			}
			if !errors.Is(err, ErrBadJSON) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want ErrBadJSON with %s", err, tc.want)
			}
		})
	}
}
