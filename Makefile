# The two commands of the README are `make run` and `make test`; both prepare the machine
# (PostgreSQL 15 + pgvector, Go modules) idempotently through scripts/.
.PHONY: run test build generate pg

run:
	./scripts/run-demo.sh

test:
	./scripts/test.sh

build:
	go build -o bin/toolgate ./cmd/toolgate

# Regenerates internal/db from sql/queries and migrations (needs sqlc v1.31.1:
# go install github.com/sqlc-dev/sqlc/cmd/sqlc@v1.31.1).
generate:
	PATH="$$PATH:$$(go env GOPATH)/bin" sqlc generate

pg:
	./scripts/pg-setup.sh
