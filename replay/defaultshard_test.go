package replay

import "testing"

// TestDefaultShard: several ranks without --shard split by key, or by
// user for a closed loop; one rank, or a shard given, is left as it is.
func TestDefaultShard(t *testing.T) {
	for _, tt := range []struct {
		ranks       int
		closed      bool
		shard, want string
	}{{1, false, "", ""}, {2, false, "", ShardKey}, {2, true, "", ShardUser}, {3, true, "tp", "tp"}, {0, true, "", ""}} {
		c := Config{Ranks: tt.ranks, ClosedLoop: tt.closed, Shard: tt.shard}
		if c.DefaultShard(); c.Shard != tt.want {
			t.Errorf("ranks %d closed %t shard %q: got %q, want %q", tt.ranks, tt.closed, tt.shard, c.Shard, tt.want)
		}
	}
}
