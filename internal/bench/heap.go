package bench

import (
	"fmt"
	"runtime"
	"sync"
	"time"
)

// HeapSampler records runtime.MemStats.HeapInuse every second, from StartHeapSampler to
// Finish.
type HeapSampler struct {
	mu      sync.Mutex
	samples []uint64
	stop    chan struct{}
	done    chan struct{}
}

// StartHeapSampler takes a first sample and samples every second until Finish.
func StartHeapSampler() *HeapSampler {
	h := &HeapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	h.sample()
	go func() {
		defer close(h.done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-t.C:
				h.sample()
			}
		}
	}()
	return h
}

func (h *HeapSampler) sample() {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	h.mu.Lock()
	h.samples = append(h.samples, m.HeapInuse)
	h.mu.Unlock()
}

// Finish stops sampling and returns the first, peak and last samples.
func (h *HeapSampler) Finish() (start, peak, end uint64) {
	close(h.stop)
	<-h.done
	h.sample()
	for _, s := range h.samples {
		peak = max(peak, s)
	}
	return h.samples[0], peak, h.samples[len(h.samples)-1]
}

// MiB prints a byte count in MiB.
func MiB(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
