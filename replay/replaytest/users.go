package replaytest

import (
	"fmt"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// UserRecords is a trace of users users issuing requests requests each,
// all users' requests interleaved and every user's gap apart in trace
// time: request k of user u (keys u<u>r<k>) writes then reads its own
// object of size bytes on tier, of class qos, generating 10 tokens. The
// closed-loop and search tests replay it.
func UserRecords(users, requests int, gap time.Duration, size int64, tier schema.Tier, qos schema.QoS) []schema.Record {
	var recs []schema.Record
	id := uint64(0)
	for k := range requests {
		for u := 1; u <= users; u++ {
			id++
			at := time.Duration(k)*gap + time.Duration(u)*time.Microsecond
			key := []byte(fmt.Sprintf("u%dr%d", u, k))
			for _, op := range []schema.Op{schema.OpWrite, schema.OpRead} {
				recs = append(recs, schema.Record{Time: at, Op: op, Size: size, Tier: tier, Key: key,
					Phase: schema.PhasePrefill, Request: id, QoS: qos, User: uint64(u), Tokens: 10})
			}
		}
	}
	return recs
}
