package datagen

// wordsNT stores n words (n a positive multiple of 4) of the stream from
// counter x on into p with non-temporal stores (nt_amd64.s).
//
//go:noescape
func wordsNT(p *byte, n int, x, b uint64)

const haveNT = true
