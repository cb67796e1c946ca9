package report

import (
	"strings"
	"testing"
)

// TestGroupByKeyNoDocumentHas: a --group-by key that no document has is
// refused, saying what sets it and what the documents can be grouped by
// instead; one that some document has groups the others under
// "no-<key>" (not "-", which names stdin).
func TestGroupByKeyNoDocumentHas(t *testing.T) {
	const ref = "testdata/kvcache_py/u50_d20_hand_measured.json"
	tests := []struct {
		name   string
		paths  []string
		keys   []string
		want   string // the error, or the documents' labels joined with " "
		errors bool
	}{
		{name: "no label: systems named instead", paths: trials3[:2], keys: []string{"label"}, errors: true,
			want: "report: --group-by label: none of the 2 documents has a label (kvreplay --label sets one; kv-cache.py documents have none): " +
				"group them by what they have, --group-by system (sysA), config or file, or give --label NAME to put them in one group"},
		{name: "no system: labels named instead", paths: goldenInputs[:3], keys: []string{"system"}, errors: true,
			want: "report: --group-by system: none of the 3 documents has a system (kvreplay --system sets one; kv-cache.py documents have none): " +
				"group them by what they have, --group-by label (llama8b_u10_d30_gpu0_cpu4_s42, llama8b_u50_d20_gpu2_cpu4_gennone_s42), config or file, " +
				"or give --label NAME to put them in one group"},
		{name: "one kv-cache.py document", paths: []string{ref}, keys: []string{"label", "config"}, errors: true,
			want: "report: --group-by label: the document has no label (kvreplay --label sets one; kv-cache.py documents have none): " +
				"group them by what they have, --group-by file, or give --label NAME to put them in one group"},
		{name: "every key asked for", paths: []string{ref}, keys: []string{"system", "label", "config", "file"}, errors: true,
			want: "report: --group-by system: the document has no system (kvreplay --system sets one; kv-cache.py documents have none): " +
				"give --label NAME to put them in one group"},
		{name: "some have a label", paths: []string{goldenInputs[0], trials3[0]}, keys: []string{"label"},
			want: "llama8b_u10_d30_gpu0_cpu4_s42 no-label"},
		{name: "system and label", paths: []string{goldenInputs[0], trials3[0]}, keys: []string{"system", "label"},
			want: "no-system/llama8b_u10_d30_gpu0_cpu4_s42 sysA/no-label"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := Load(tt.paths, nil, LoadOptions{GroupBy: tt.keys})
			if tt.errors {
				if err == nil || err.Error() != tt.want {
					t.Errorf("error\n%v\nwant\n%s", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var labels []string
			for _, d := range docs {
				labels = append(labels, d.Label)
			}
			if got := strings.Join(labels, " "); got != tt.want {
				t.Errorf("labels %q, want %q", got, tt.want)
			}
		})
	}
}
