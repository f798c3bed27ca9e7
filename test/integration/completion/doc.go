// Package completion tests the shell completion of `kubectl ocm` as kubectl
// (1.26 and later) drives it: `make build` and `make install` put the
// kubectl_complete-ocm script beside kubectl-ocm, kubectl runs it from PATH,
// and the verbs and the managed cluster names of a real hub API server
// complete, through the script, through kubectl itself and through the
// in-process command tree. The tests build the binaries with make and start a
// control plane, so they are skipped under `go test -short`.
package completion
