package sim

import (
	"fmt"
	"strconv"

	"github.com/kvbench/kvbench/schema"
)

// ragChunk is one chunk of a RAG document: a KV object of its own.
type ragChunk struct {
	key    string
	tokens int
}

// ragDoc is an ingested document.
type ragDoc struct {
	id     string
	chunks []ragChunk
}

// ragManager is the reference's RAGDocumentManager (reference section 3.4):
// documents split into chunks whose KV objects are written at ingest and
// read back, top-k at a time, by retrieval.
type ragManager struct {
	e       *engine
	docs    []*ragDoc
	weights []float64 // scratch for retrieval
	picked  []ragChunk
}

func newRAGManager(e *engine) *ragManager { return &ragManager{e: e} }

// ingest writes the documents' chunks, as the reference's ingestion thread
// does at the start of a synthetic run.
func (m *ragManager) ingest() error {
	e, rc := m.e, &m.e.cfg.RAG
	lo, hi := rc.SmallDocTokensMin, rc.SmallDocTokensMax
	if e.model.Large() {
		lo, hi = rc.LargeDocTokensMin, rc.LargeDocTokensMax
	}
	perChunk := max(1, min(int64(rc.ChunkSizeTokens), rc.MaxChunkBytes/max(e.bpt, 1)))
	for i := range e.cfg.RAGNumDocs {
		tokens := e.randint(lo, hi)
		doc := &ragDoc{id: fmt.Sprintf("doc_%04d", i)}
		n := (int64(tokens) + perChunk - 1) / perChunk
		for j := range n {
			ct := int(min(perChunk, int64(tokens)-j*perChunk))
			key := "rag_" + doc.id + "_chunk_" + strconv.FormatInt(j, 10)
			if _, err := e.cache.allocate(key, ct, schema.PhasePrefill); err != nil {
				return err
			}
			doc.chunks = append(doc.chunks, ragChunk{key: key, tokens: ct})
		}
		// The reference's max_documents eviction calls a cache method that
		// does not exist: the document leaves the index, its objects stay.
		if rc.MaxDocuments > 0 && len(m.docs) >= rc.MaxDocuments {
			m.docs = m.docs[1:]
		}
		m.docs = append(m.docs, doc)
	}
	return nil
}

// retrieve picks min(top-k, chunks) distinct chunks of doc, earlier chunks
// more likely under the zipfian distribution (p ~ 1/(i+1)), as numpy's
// choice(replace=False, p=...) does: draw, remove, renormalise. The result
// is valid until the next call.
func (m *ragManager) retrieve(doc *ragDoc) []ragChunk {
	e := m.e
	e.stats.ragRetrievals++
	e.depart("rag-stream", "RAG chunks are chosen from kvtrace's one random stream, kv-cache.py's Python random stream, not from numpy's "+
		"global stream (np.random.choice): the same zipfian choice without replacement, but for a seed other chunks than kv-cache.py's, "+
		"and every draw after the first retrieval comes later in the Python stream than kv-cache.py's")
	n := len(doc.chunks)
	k := min(e.cfg.RAG.TopKChunks, n)
	m.weights = m.weights[:0]
	total := 0.0
	zipf := e.cfg.RAG.Distribution != "uniform" && e.cfg.RAG.Distribution != "random"
	for i := range n {
		w := 1.0
		if zipf {
			w = 1 / float64(i+1)
		}
		m.weights = append(m.weights, w)
		total += w
	}
	m.picked = m.picked[:0]
	for range k {
		x := e.rng.Float64() * total
		idx := -1
		for i, w := range m.weights {
			if w == 0 {
				continue
			}
			idx = i
			if x < w {
				break
			}
			x -= w
		}
		total -= m.weights[idx]
		m.weights[idx] = 0
		m.picked = append(m.picked, doc.chunks[idx])
	}
	e.stats.ragChunks += int64(len(m.picked))
	return m.picked
}
