package syncwatch

import "time"

// SetRescan makes w rescan the sources every d instead of every Rescan.
func SetRescan(w *Watcher, d time.Duration) { w.rescan = d }

// Connected reports whether w has a session to the source open now.
func Connected(w *Watcher, sourceID int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.connected[sourceID]
}
