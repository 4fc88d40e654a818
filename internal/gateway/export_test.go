package gateway

// InMemory is the number of sessions the handler holds in memory (for tests).
func (h *HTTPHandler) InMemory() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// InMemoryOf is the number of sessions of key the handler holds in memory, and how many
// of them are stored (for tests).
func (h *HTTPHandler) InMemoryOf(key int64) (n, stored int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, hs := range h.sessions {
		if keyID(hs.s.owner) == key {
			n++
			if hs.s.stored.Load() {
				stored++
			}
		}
	}
	return n, stored
}
