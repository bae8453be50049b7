package link

import (
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/goffload/goffload/internal/atomicfile"
)

// DefaultTimeTraceGranularity is the wrapper's --wrapper-time-trace-granularity
// when none is given, in microseconds: LLVM's default.
const DefaultTimeTraceGranularity = 500

// timeTrace records when the steps of a Run ran, for --wrapper-time-trace:
// a trace in the Chrome trace event format (what LLVM's -ftime-trace and
// the wrapper's --wrapper-time-trace write, which chrome://tracing and
// Perfetto read), one complete event ("ph": "X") a step.
type timeTrace struct {
	mu     sync.Mutex
	start  time.Time
	events []traceEvent
}

// traceEvent is one event of the trace; times are in microseconds from the
// trace's start.
type traceEvent struct {
	Name string            `json:"name"`
	Ph   string            `json:"ph"`
	TS   int64             `json:"ts"`
	Dur  int64             `json:"dur"`
	PID  int               `json:"pid"`
	TID  int               `json:"tid"`
	Args map[string]string `json:"args,omitempty"`
}

// add records a step that ran from start to now.
func (tt *timeTrace) add(name, detail string, start time.Time) {
	if tt == nil {
		return
	}
	ev := traceEvent{Name: name, Ph: "X", TS: start.Sub(tt.start).Microseconds(), Dur: time.Since(start).Microseconds(), PID: 1, TID: 1}
	if detail != "" {
		ev.Args = map[string]string{"detail": detail}
	}
	tt.mu.Lock()
	tt.events = append(tt.events, ev)
	tt.mu.Unlock()
}

// write writes the trace to path: the whole link as one event, then the
// steps that took granularity microseconds or more, each on a thread of its
// own where steps ran at once.
func (tt *timeTrace) write(path string, granularity int) error {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	total := traceEvent{Name: "Total goffload link", Ph: "X", TS: 0, Dur: time.Since(tt.start).Microseconds(), PID: 1, TID: 0}
	events := []traceEvent{total}
	var ends []int64 // when each thread's last event ends
	for _, ev := range tt.events {
		if ev.Dur < int64(granularity) {
			continue
		}
		tid := len(ends)
		for i, end := range ends {
			if end <= ev.TS {
				tid = i
				break
			}
		}
		if tid == len(ends) {
			ends = append(ends, 0)
		}
		ends[tid] = ev.TS + ev.Dur
		ev.TID = tid + 1
		events = append(events, ev)
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		return json.NewEncoder(w).Encode(struct {
			TraceEvents     []traceEvent `json:"traceEvents"`
			BeginningOfTime int64        `json:"beginningOfTime"`
			DisplayTimeUnit string       `json:"displayTimeUnit"`
		}{events, tt.start.UnixMicro(), "ns"})
	})
}
