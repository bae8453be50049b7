package offload

import (
	"fmt"
	"sync"

	"github.com/goffload/goffload"
)

// Budget is what reads sharing it (through [ReadOptions.Budget]) may decode
// in total: one per command, however many files, sections, binaries and
// nested binaries it reads. It grows with the input: every read that is not
// of a nested binary ([ReadOptions.Nested]) adds the size of its input, and
// every compressed binary its InflatedSize (compression being the one
// legitimate expansion, bounded by [Budget.MaxInflated]). Against that
// input:
//
//   - images listed, nested ones included, are at most one per 40 bytes
//     (the size of an entry) plus 4096;
//   - the bytes of those images (the part inside their binary, counted each
//     time an image is listed, so that entries sharing one image count it
//     each time) and of their strings (each key and value, counted each time
//     an entry points to it, as list prints it) are at most 16 times the
//     input plus 1 MiB.
//
// The bytes inflated from compressed binaries (InflatedSize, and again
// whenever a part must be inflated a second time) are at most MaxInflated in
// total, and the inflated bytes held in memory at most MaxInflatedMemory in
// total; nothing is written to temporary files. A read beyond any of these
// fails with an error matching [goffload.ErrLimit] ("over the limit").
//
// The zero value is ready to use with the default limits. A Budget is safe
// for concurrent use.
type Budget struct {
	// MaxInflated bounds the bytes inflated from compressed binaries by all
	// reads of the budget; 0 means 16 GiB.
	MaxInflated uint64
	// MaxInflatedMemory bounds the inflated bytes kept in memory by all
	// reads of the budget; 0 means 64 MiB. Beyond it, an inflated binary is
	// read by inflating its stream again from the start where needed.
	MaxInflatedMemory uint64

	mu       sync.Mutex
	input    uint64 // bytes of input, and inflated sizes
	images   uint64 // images listed
	listed   uint64 // image and string bytes listed
	inflated uint64 // bytes inflated, or to be
	held     uint64 // inflated bytes in memory
	active   *inflater
}

// Budget bounds, as the [Budget] doc states them.
const (
	budgetEntryBytes   = ImageEntrySize // input bytes per image listed
	budgetImagesPlus   = 4096
	budgetBytesFactor  = 16
	budgetBytesPlus    = 1 << 20
	defaultMaxInflated = 16 << 30
	defaultMaxHeld     = 64 << 20
)

func (g *Budget) maxInflated() uint64 {
	if g.MaxInflated == 0 {
		return defaultMaxInflated
	}
	return g.MaxInflated
}

func (g *Budget) maxHeld() uint64 {
	if g.MaxInflatedMemory == 0 {
		return defaultMaxHeld
	}
	return g.MaxInflatedMemory
}

// addInput credits n bytes of input.
func (g *Budget) addInput(n uint64) {
	g.mu.Lock()
	g.input = satAdd(g.input, n)
	g.mu.Unlock()
}

func satAdd(a, b uint64) uint64 {
	if a+b < a {
		return ^uint64(0)
	}
	return a + b
}

func satMul(a, b uint64) uint64 {
	if a != 0 && b > ^uint64(0)/a {
		return ^uint64(0)
	}
	return a * b
}

// listBytes charges n bytes of images or strings listed.
func (g *Budget) listBytes(n uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	limit := satAdd(satMul(g.input, budgetBytesFactor), budgetBytesPlus)
	if n > limit || g.listed > limit-n {
		return fmt.Errorf("images and strings of %d bytes or more, listed each time an entry points to them, from %d bytes of input (at most %d times it plus 1 MiB): %w",
			satAdd(g.listed, n), g.input, budgetBytesFactor, goffload.ErrLimit)
	}
	g.listed += n
	return nil
}

// listImages charges n images listed.
func (g *Budget) listImages(n uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	limit := g.input/budgetEntryBytes + budgetImagesPlus
	if n > limit || g.images > limit-n {
		return fmt.Errorf("%d images or more, nested ones included, from %d bytes of input (at most one per %d bytes plus %d): %w",
			satAdd(g.images, n), g.input, budgetEntryBytes, budgetImagesPlus, goffload.ErrLimit)
	}
	g.images += n
	return nil
}

// inflate charges n bytes to inflate.
func (g *Budget) inflate(n uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	limit := g.maxInflated()
	if n > limit || g.inflated > limit-n {
		return fmt.Errorf("%d bytes or more inflated from compressed binaries, in all (at most %d; ReadOptions.Budget raises it): %w",
			satAdd(g.inflated, n), limit, goffload.ErrLimit)
	}
	g.inflated += n
	return nil
}

// hold reserves n bytes of memory for inflated data, reporting whether
// the budget has room for them.
func (g *Budget) hold(n uint64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if n > g.maxHeld() || g.held > g.maxHeld()-n {
		return false
	}
	g.held += n
	return true
}

// use makes in the one inflater of the budget whose decoder is open,
// closing the decoder of the one before: however many binaries a command
// reads, one decoder's window is in memory.
func (g *Budget) use(in *inflater) {
	g.mu.Lock()
	prev := g.active
	g.active = in
	g.mu.Unlock()
	if prev != nil && prev != in && prev.mu.TryLock() {
		// A reader busy in another goroutine keeps its decoder until done.
		prev.dropDecoder()
		prev.mu.Unlock()
	}
}

// budget returns the budget of the options, or a new one for one read.
func (o *ReadOptions) budget() *Budget {
	if o == nil || o.Budget == nil {
		return &Budget{}
	}
	return o.Budget
}

func (o *ReadOptions) nested() bool { return o != nil && o.Nested }

// InflatedLimit returns the bytes that the reads of the budget may inflate
// in all: MaxInflated, or its default.
func (g *Budget) InflatedLimit() uint64 { return g.maxInflated() }
