package syncwatch

import "time"

// SetRescan makes w rescan the sources every d instead of every Rescan.
func SetRescan(w *Watcher, d time.Duration) { w.rescan = d }
