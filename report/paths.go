package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/schema"
)

// pathRow is where one tier of one run lived: its backend and the storage
// behind it, so that runs set side by side say what they compared (a
// native S3 tier beside the same bucket through s3fs, ext4 on one drive
// beside xfs on another).
type pathRow struct {
	Group   string
	Trial   int
	Tier    string
	Backend string
	Where   string // the path, its file system, device and I/O mode, or the bucket and endpoint
	Gateway string // the FUSE program behind a mount, its version and command line; "" for none
}

// pathRows returns where each tier of each trial of r lived, in group,
// trial and tier order. A document without a tier path for a tier's
// backend (kv-cache.py's, kvtrace's) has none.
func pathRows(r *Report) []pathRow {
	var out []pathRow
	for _, g := range r.Groups {
		for i, t := range g.Trials {
			if t == nil || g.Simulated {
				continue
			}
			id := g.TrialID(i)
			for _, tt := range t.Tiers {
				// A merged run's tier has a path per rank whose
				// storage differs.
				for _, p := range tierPaths(t, tt.Backend) {
					row := pathRow{Group: g.Label, Trial: id, Tier: tt.Tier, Backend: tt.Backend, Where: where(p)}
					if p.Gateway != "" {
						row.Gateway = p.Gateway
						if p.GatewayCommand != "" {
							row.Gateway += " (" + p.GatewayCommand + ")"
						}
					}
					out = append(out, row)
				}
			}
		}
	}
	return out
}

// tierPaths are r's paths of backend, in its order; none when it has
// none.
func tierPaths(r *schema.Result, backend string) []*schema.PathInfo {
	var ps []*schema.PathInfo
	for i := range r.Host.TierPaths {
		if r.Host.TierPaths[i].Backend == backend {
			ps = append(ps, &r.Host.TierPaths[i])
		}
	}
	return ps
}

// where describes a tier's path in a few words: "s3://kv/run-1/ at
// http://127.0.0.1:7070", or "/mnt/nvme/kvreplay-1 on xfs, /dev/nvme0n1
// (Samsung ...), O_DIRECT".
func where(p *schema.PathInfo) string {
	if p.S3 != nil || strings.HasPrefix(p.Path, "s3://") {
		if p.Device != "" {
			return p.Path + " at " + p.Device
		}
		return p.Path
	}
	var parts []string
	if p.FileSystem != "" {
		parts = append(parts, p.FileSystem)
	}
	if p.Device != "" {
		dev := p.Device
		if p.Model != "" {
			dev += " (" + p.Model + ")"
		}
		parts = append(parts, dev)
	}
	if p.FileSystem != "" {
		if p.Direct {
			parts = append(parts, "O_DIRECT")
		} else {
			parts = append(parts, "buffered")
		}
	}
	if len(parts) == 0 {
		return p.Path
	}
	return p.Path + " on " + strings.Join(parts, ", ")
}

// pathNotes say, for each tier that lives in S3 in one group and behind a
// FUSE gateway in another, that the comparison is the gateway's price:
// the POSIX path MLPerf's rules require for object storage.
func pathNotes(rows []pathRow) []string {
	type seen struct{ native, gateway []string }
	byTier := map[string]*seen{}
	var tiers []string
	add := func(list []string, g string) []string {
		if slices.Contains(list, g) {
			return list
		}
		return append(list, g)
	}
	for _, r := range rows {
		s := byTier[r.Tier]
		if s == nil {
			s = &seen{}
			byTier[r.Tier] = s
			tiers = append(tiers, r.Tier)
		}
		switch {
		case r.Backend == "s3":
			s.native = add(s.native, r.Group)
		case r.Gateway != "":
			s.gateway = add(s.gateway, r.Group+" ("+strings.SplitN(r.Gateway, ":", 2)[0]+")")
		}
	}
	var notes []string
	for _, t := range tiers {
		if s := byTier[t]; len(s.native) > 0 && len(s.gateway) > 0 {
			notes = append(notes, fmt.Sprintf("%s: native S3 in %s, through a POSIX gateway in %s: their ratio is what the gateway costs",
				t, strings.Join(s.native, ", "), strings.Join(s.gateway, ", ")))
		}
	}
	return notes
}

// pathTable is the storage view of the tabular formats, a row per group,
// tier and storage (the trials that share it listed together); nil when
// no run recorded its tiers' paths.
func pathTable(r *Report) *table {
	rows := pathRows(r)
	if len(rows) == 0 {
		return nil
	}
	t := &table{title: "where each tier lived, per run", header: []string{"group", "trials", "tier", "backend", "where", "gateway"}}
	type key struct{ group, tier, backend, where, gateway string }
	at := map[key]int{}
	for _, p := range rows {
		k := key{p.Group, p.Tier, p.Backend, p.Where, p.Gateway}
		if i, ok := at[k]; ok {
			t.rows[i][1] += "," + strconv.Itoa(p.Trial)
			continue
		}
		at[k] = len(t.rows)
		t.rows = append(t.rows, []string{p.Group, strconv.Itoa(p.Trial), p.Tier, p.Backend, p.Where, cmp.Or(p.Gateway, "-")})
	}
	t.notes = pathNotes(rows)
	return t
}
