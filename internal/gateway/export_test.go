package gateway

// InMemory is the number of sessions the handler holds in memory (for tests).
func (h *HTTPHandler) InMemory() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}
