//go:build !amd64

package datagen

const haveNT = false

func wordsNT(p *byte, n int, x, b uint64) {
	panic("datagen: no non-temporal stores on this architecture")
}
