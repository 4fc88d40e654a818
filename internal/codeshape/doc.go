// Package codeshape checks the shape of the project's own Go source where the linters
// (go vet, staticcheck) have no check: its tests read the source; it has no code of its own.
package codeshape
