-- Housekeeping of the retrieval log.

-- name: EnsureSearchLogPartitions :one
SELECT toolgate_ensure_search_log_partitions(sqlc.arg(months_ahead)::int)::int AS created;

-- name: DropSearchLogPartitions :one
SELECT toolgate_drop_search_log_partitions(sqlc.arg(keep)::interval)::int AS dropped;
