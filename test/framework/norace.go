//go:build !race

package framework

// raceBuildFlags is empty: the test is not race detecting (see race.go).
var raceBuildFlags []string
