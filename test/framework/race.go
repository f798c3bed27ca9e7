//go:build race

package framework

// raceBuildFlags makes the binaries a test builds (Build, BuildForTest) race
// detecting when the test itself is, so that `go test -race` covers the
// controllers the tests launch as processes too.
var raceBuildFlags = []string{"-race"}
