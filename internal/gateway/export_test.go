package gateway

// InMemory is the number of sessions the handler holds in memory (for tests).
func (h *HTTPHandler) InMemory() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// WaitLabels waits for the implicit-label writes in flight (for tests).
func (g *Gateway) WaitLabels() { g.labelWG.Wait() }
