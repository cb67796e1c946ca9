package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/sim"
)

const modelsUsage = `kvtrace models: list the models --model accepts and their KV cache sizes.

Usage:
  kvtrace models [--json] [--config FILE]

Bytes per token are the reference's: MHA and GQA layers x kv_heads x head_dim
x 2 (K and V) x bytes per element; MLA layers x (kv_lora_rank +
qk_rope_head_dim) x bytes per element. An object of T tokens is T times this,
divided by --tensor-parallel. --config merges a config.yaml's model_configs
over the nine built-in models, as kvtrace --config does.

--json writes one array, sorted by key, of objects with these stable keys:
  key, name, default (true for the default --model), num_layers, hidden_dim,
  num_heads, kv_heads, head_dim, dtype, bytes_per_element, attention_type,
  kv_lora_rank, qk_rope_head_dim, bytes_per_token, mib_per_1k_tokens, large
  (RAG sizes its documents for a large model: hidden_dim >= 8192 or >= 64
  layers).

Examples:
  kvtrace models
  kvtrace models --config config.yaml
  kvtrace models --json | jq -r '.[] | [.key, .bytes_per_token] | @tsv'
`

// modelInfo is one model in kvtrace models --json. Its keys are stable.
type modelInfo struct {
	Key             string  `json:"key"`
	Name            string  `json:"name"`
	Default         bool    `json:"default"`
	NumLayers       int     `json:"num_layers"`
	HiddenDim       int     `json:"hidden_dim"`
	NumHeads        int     `json:"num_heads"`
	KVHeads         int     `json:"kv_heads"`
	HeadDim         int64   `json:"head_dim"`
	DType           string  `json:"dtype"`
	BytesPerElement int64   `json:"bytes_per_element"`
	AttentionType   string  `json:"attention_type"`
	KVLoraRank      int     `json:"kv_lora_rank"`
	QKRopeHeadDim   int     `json:"qk_rope_head_dim"`
	BytesPerToken   int64   `json:"bytes_per_token"`
	MiBPer1KTokens  float64 `json:"mib_per_1k_tokens"`
	Large           bool    `json:"large"`
}

// runModels lists the models: a table, or JSON with --json.
func runModels(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("kvtrace models", modelsUsage, stderr)
	cli.AddStandard(fs)
	asJSON := fs.Bool("json", false, "write JSON (an array of models) instead of a table")
	configPath := fs.String("config", "", "merge this config.yaml's model_configs over the built-in models")
	rest, err := cli.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return cli.Usagef("models: unexpected argument %q (want only options)", rest[0])
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	cfg := sim.DefaultConfig()
	if *configPath != "" {
		if err := loadConfigFile(*configPath, &cfg); err != nil {
			return err
		}
	}
	models := modelInfos(&cfg)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(models); err != nil {
			return fmt.Errorf("models: %w", err)
		}
		return nil
	}
	if err := writeModelTable(stdout, models); err != nil {
		return fmt.Errorf("models: %w", err)
	}
	return nil
}

// modelInfos describes cfg's models, sorted by key.
func modelInfos(cfg *sim.Config) []modelInfo {
	keys := make([]string, 0, len(cfg.Models))
	for k := range cfg.Models {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]modelInfo, 0, len(keys))
	for _, k := range keys {
		m := cfg.Models[k]
		bpt := m.BytesPerToken()
		out = append(out, modelInfo{
			Key:             k,
			Name:            m.Name,
			Default:         k == sim.DefaultModel,
			NumLayers:       m.NumLayers,
			HiddenDim:       m.HiddenDim,
			NumHeads:        m.NumHeads,
			KVHeads:         m.KVHeads,
			HeadDim:         m.HeadDim(),
			DType:           m.DType,
			BytesPerElement: m.BytesPerElement(),
			AttentionType:   m.AttentionType,
			KVLoraRank:      m.KVLoraRank,
			QKRopeHeadDim:   m.QKRopeHeadDim,
			BytesPerToken:   bpt,
			MiBPer1KTokens:  float64(bpt) * 1000 / (1 << 20),
			Large:           m.Large(),
		})
	}
	return out
}

// writeModelTable writes the models as an aligned table. MLA models show
// their latent width (kv_lora_rank+qk_rope_head_dim) instead of heads.
func writeModelTable(w io.Writer, models []modelInfo) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tNAME\tLAYERS\tKV HEADS\tHEAD DIM\tDTYPE\tATTENTION\tBYTES/TOKEN\tMiB/1K TOKENS")
	for _, m := range models {
		key := m.Key
		if m.Default {
			key += " *"
		}
		heads, dim, attention := strconv.Itoa(m.KVHeads), strconv.FormatInt(m.HeadDim, 10), m.AttentionType
		if m.AttentionType == "mla" {
			heads, dim = "-", "-"
			attention = fmt.Sprintf("mla %d+%d", m.KVLoraRank, m.QKRopeHeadDim)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%d\t%.2f\n",
			key, m.Name, m.NumLayers, heads, dim, m.DType, attention, m.BytesPerToken, m.MiBPer1KTokens)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "* the default --model")
	return err
}
