package memory

// SetBatch sets how many tools a sweep refreshes between two records of its progress.
func SetBatch(s *Service, n int) { s.batch = n }
