// Command verifyimports checks the layering of config/, controllers/ and
// plugins/ from the directories themselves, so that a new controller
// domain or verb is covered the day it is created: no controller domain
// (controllers/X) imports another, nothing under controllers/ imports
// plugins/, config/ imports neither, and no verb (plugins/X) imports
// another, only plugins/cli. The rules that need no directory list (pkg/
// under everything, plugins/ never importing controllers/, only tests
// using test/) are golangci-lint's depguard rules in .golangci.yml.
//
// Run it from the repository's root (make verify-imports); it prints each
// refused import as file:line: message, and each exception that allows
// nothing any more, and exits 1 when there is one.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

func main() {
	if err := run(os.DirFS(".")); err != nil {
		fmt.Fprintln(os.Stderr, "verifyimports:", err)
		os.Exit(1)
	}
}

func run(repo fs.FS) error {
	module, err := moduleOf(repo)
	if err != nil {
		return err
	}
	violations, unused, err := Check(repo, module, Exceptions)
	if err != nil {
		return err
	}
	for _, v := range violations {
		fmt.Println(v)
	}
	for _, e := range unused {
		fmt.Printf("hack/verifyimports/layering.go: the exception %s -> %s (%s) allows no import any more: remove it\n", e.From, e.To, e.Reason)
	}
	if n := len(violations) + len(unused); n > 0 {
		return fmt.Errorf("%d problems", n)
	}
	return nil
}

// moduleOf returns the module path of go.mod in repo.
func moduleOf(repo fs.FS) (string, error) {
	f, err := repo.Open("go.mod")
	if err != nil {
		return "", fmt.Errorf("run it from the repository's root: %w", err)
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", errors.New("go.mod has no module line")
}
