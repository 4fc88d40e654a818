// Package chartcheck holds the tests of the deployment files, in a module of its own so that
// the Helm and Kubernetes modules they need stay out of toolgate's go.mod and binary:
// the Helm chart deploy/helm/toolgate is linted and rendered with Helm's Go packages for its
// default values and each documented variant, every manifest is decoded strictly into the
// Kubernetes API types, and the Dockerfile and docker-compose.yml are checked against the
// chart and the binary (docs/deploy.md, "What is tested"). scripts/test.sh runs them.
package chartcheck
