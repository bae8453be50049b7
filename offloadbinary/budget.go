package offloadbinary

import (
	"fmt"
	"sync"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/budget"
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
// Readers of the containers that hold binaries (archives, ELF files, their
// entry tables) count the names they hand out, each time a record names
// one, against the same rule: at most 16 times the bytes of those
// containers plus 1 MiB, for all the files of the command ([Budget.CountNames]).
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
	refs     budget.Counter // input bytes and inflated sizes; image and string bytes listed
	names    budget.Counter // containers' bytes; the names read from them
	images   uint64         // images listed
	inflated uint64         // bytes inflated, or to be
	held     uint64         // inflated bytes in memory
	active   *inflater
}

// Budget bounds, as the [Budget] doc states them; the bytes listed are
// bounded by internal/budget's one rule (budget.Linear).
const (
	budgetEntryBytes   = ImageEntrySize // input bytes per image listed
	budgetImagesPlus   = 4096
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
	g.refs.Grow(n)
	g.mu.Unlock()
}

// listBytes charges n bytes of images or strings listed.
func (g *Budget) listBytes(n uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.refs.Take(n) {
		return fmt.Errorf("images and strings of %d bytes or more, listed each time an entry points to them, from %d bytes of input (at most %d times it plus %d): %w",
			budget.Add(g.refs.Used(), n), g.refs.Input(), budget.Factor, budget.Slack, goffload.ErrLimit)
	}
	return nil
}

// listImages charges n images listed.
func (g *Budget) listImages(n uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	limit := g.refs.Input()/budgetEntryBytes + budgetImagesPlus
	if n > limit || g.images > limit-n {
		return fmt.Errorf("%d images or more, nested ones included, from %d bytes of input (at most one per %d bytes plus %d): %w",
			budget.Add(g.images, n), g.refs.Input(), budgetEntryBytes, budgetImagesPlus, goffload.ErrLimit)
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
			budget.Add(g.inflated, n), limit, goffload.ErrLimit)
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

// CountNames counts what a reader of containers (an archive, an ELF file,
// its entry tables) has read: input bytes of container, whose names it
// referenced referenced bytes, each name counted every time a record names
// it. The names of all the containers a budget counts are at most 16 times
// their bytes plus 1 MiB; past it CountNames fails with an error matching
// [goffload.ErrLimit]. fatobj counts each file, archive and object it
// reads here, so that files one command reads cannot each take the 1 MiB
// that one file may.
func (g *Budget) CountNames(input, referenced uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.names.Grow(input)
	if !g.names.Take(referenced) {
		return fmt.Errorf("names of %d bytes or more, counted each time a record names them, from %d bytes of archives and objects (at most %d times it plus %d): %w",
			budget.Add(g.names.Used(), referenced), g.names.Input(), budget.Factor, budget.Slack, goffload.ErrLimit)
	}
	return nil
}
