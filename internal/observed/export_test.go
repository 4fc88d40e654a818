package observed

// SetBatch sets how many tools a sweep of s refreshes between two records of its progress.
func SetBatch(s *Service, n int) { s.batch = n }
