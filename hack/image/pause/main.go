// Command pause is the sandbox's pause image: the process that holds a Pod's
// namespaces while its containers come and go. It does what Kubernetes'
// pause does: it sleeps until SIGINT or SIGTERM and exits 0 then, and as the
// first process of a Pod that shares its process namespace it reaps the
// children that exit.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-v" {
		fmt.Println("pause (kubectl-ocm sandbox)")
		return
	}
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "pause: warning: not running as PID 1")
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range sigs {
		if sig == syscall.SIGCHLD {
			reap()
			continue
		}
		fmt.Fprintf(os.Stderr, "pause: shutting down, got signal %v\n", sig)
		os.Exit(0)
	}
}

// reap waits for every child that has exited.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
